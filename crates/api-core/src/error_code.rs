//! [`ErrorCode`]: what kind of error the server answered, as an open value set to `match` on.

use std::fmt;

macro_rules! error_codes {
    ($( $(#[$doc:meta])* $variant:ident = $text:literal, $status:literal; )+) => {
        /// What kind of error the server answered: the code of the management API's error body
        /// (`NOT_FOUND: ...`), or, when the body has none (observability answers, gateway pages), the
        /// code of the HTTP status. A code this version of the SDK does not know is kept as
        /// [`ErrorCode::Other`] with its text, and a known code always maps to its variant.
        ///
        /// ```
        /// use api_core::ErrorCode;
        ///
        /// # fn handle(error: api_core::Error) {
        /// match error.code() {
        ///     Some(ErrorCode::NotFound) => println!("nothing there"),
        ///     Some(ErrorCode::FailedDependency) => println!("start the service first"),
        ///     Some(ErrorCode::TooManyRequests) => println!("slow down"),
        ///     Some(other) => println!("the server said {other}"),
        ///     None => println!("no answer from the server: {error}"),
        /// }
        /// # }
        /// assert_eq!(ErrorCode::from("NOT_FOUND"), ErrorCode::NotFound);
        /// assert_eq!(ErrorCode::from_status(503), ErrorCode::ServiceUnavailable);
        /// ```
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $( $(#[$doc])* $variant, )+
            /// A code this version of the SDK does not know, kept as it came (`HTTP_<status>` for a
            /// status without a code). It cannot be built from a known code.
            Other(UnknownCode),
        }

        impl ErrorCode {
            /// Every code this version of the SDK knows, as the server writes it.
            pub const KNOWN: &'static [&'static str] = &[$($text),+];

            /// The code as the server writes it, e.g. `NOT_FOUND`.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $text, )+
                    Self::Other(code) => &code.0,
                }
            }

            /// The code of an HTTP status, for answers whose body names none.
            pub fn from_status(status: u16) -> Self {
                match status {
                    $( $status => Self::$variant, )+
                    other => Self::Other(UnknownCode(format!("HTTP_{other}"))),
                }
            }

            fn known(text: &str) -> Option<Self> {
                match text {
                    $( $text => Some(Self::$variant), )+
                    _ => None,
                }
            }
        }
    };
}

error_codes! {
    /// 400: the request is malformed or invalid (the message names the field).
    BadRequest = "BAD_REQUEST", 400;
    /// 401: the credentials are missing or wrong.
    Unauthorized = "UNAUTHORIZED", 401;
    /// 403: the credentials may not do this (a read-only key, another organization).
    Forbidden = "FORBIDDEN", 403;
    /// 404: the resource does not exist (or no longer).
    NotFound = "NOT_FOUND", 404;
    /// 405: the path does not take this method.
    MethodNotAllowed = "METHOD_NOT_ALLOWED", 405;
    /// 409: the request conflicts with the resource's state.
    Conflict = "CONFLICT", 409;
    /// 413: the request body is too large.
    PayloadTooLarge = "PAYLOAD_TOO_LARGE", 413;
    /// 424: a pipe create while the service is not running.
    FailedDependency = "FAILED_DEPENDENCY", 424;
    /// 429: too many requests.
    TooManyRequests = "TOO_MANY_REQUESTS", 429;
    /// 500: the server failed.
    InternalError = "INTERNAL_ERROR", 500;
    /// 502: a gateway got no valid answer from the server.
    BadGateway = "BAD_GATEWAY", 502;
    /// 503: the service is unavailable.
    ServiceUnavailable = "SERVICE_UNAVAILABLE", 503;
    /// 504: a gateway timed out waiting for the server.
    GatewayTimeout = "GATEWAY_TIMEOUT", 504;
}

/// The text of an error code this version of the SDK does not know.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UnknownCode(String);

impl UnknownCode {
    /// The code as it came.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for ErrorCode {
    fn from(text: &str) -> Self {
        Self::known(text).unwrap_or_else(|| Self::Other(UnknownCode(text.to_string())))
    }
}

impl From<String> for ErrorCode {
    fn from(text: String) -> Self {
        Self::known(&text).unwrap_or(Self::Other(UnknownCode(text)))
    }
}

impl std::str::FromStr for ErrorCode {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(Self::from(text))
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_statuses_agree() {
        for text in ErrorCode::KNOWN {
            let code = ErrorCode::from(*text);
            assert!(!matches!(code, ErrorCode::Other(_)), "{text}");
            assert_eq!(code.as_str(), *text);
            assert_eq!(code.to_string(), *text);
            assert_eq!(ErrorCode::from(text.to_string()), code);
        }
        assert_eq!(ErrorCode::from_status(424), ErrorCode::FailedDependency);
        assert_eq!(ErrorCode::from_status(418).as_str(), "HTTP_418");
        assert_eq!(ErrorCode::from("QUOTA_EXCEEDED").as_str(), "QUOTA_EXCEEDED");
        let ErrorCode::Other(unknown) = ErrorCode::from("QUOTA_EXCEEDED") else {
            panic!("an unknown code")
        };
        assert_eq!(unknown.as_str(), "QUOTA_EXCEEDED");
        assert_eq!(
            "CONFLICT".parse::<ErrorCode>().unwrap(),
            ErrorCode::Conflict
        );
    }
}
