//! Open value sets of the observability API.

open_enum! {
    /// State of an alert.
    pub enum AlertState {
        /// Firing.
        Alert = "ALERT",
        /// Not firing.
        Ok = "OK",
        /// Not enough data to decide.
        InsufficientData = "INSUFFICIENT_DATA",
        /// Disabled.
        Disabled = "DISABLED",
        /// About to fire.
        Pending = "PENDING",
        /// Enabled (the value seen in the API description's example).
        Active = "active",
    }
}

open_enum! {
    /// Whether an alert fires above or below its threshold.
    pub enum AlertThresholdType {
        /// Fires above the threshold.
        Above = "above",
        /// Fires below the threshold.
        Below = "below",
        /// Fires strictly above the threshold.
        AboveExclusive = "above_exclusive",
        /// Fires at or below the threshold.
        BelowOrEqual = "below_or_equal",
        /// Fires when the value equals the threshold.
        Equal = "equal",
        /// Fires when the value differs from the threshold.
        NotEqual = "not_equal",
        /// Fires when the value lies within a range.
        Between = "between",
        /// Fires when the value lies outside a range.
        NotBetween = "not_between",
    }
}

open_enum! {
    /// What an alert watches.
    pub enum AlertSource {
        /// A saved search.
        SavedSearch = "saved_search",
        /// A dashboard tile.
        Tile = "tile",
    }
}

open_enum! {
    /// Evaluation interval of an alert.
    pub enum AlertInterval {
        /// One minute.
        OneMinute = "1m",
        /// Five minutes.
        FiveMinutes = "5m",
        /// Fifteen minutes.
        FifteenMinutes = "15m",
        /// Thirty minutes.
        ThirtyMinutes = "30m",
        /// One hour.
        OneHour = "1h",
        /// Six hours.
        SixHours = "6h",
        /// Twelve hours.
        TwelveHours = "12h",
        /// One day.
        OneDay = "1d",
    }
}

open_enum! {
    /// Kind of notification channel of an alert.
    pub enum AlertChannelType {
        /// A webhook.
        Webhook = "webhook",
        /// E-mail to a list of recipients.
        Email = "email",
    }
}

open_enum! {
    /// Aggregation function of a series.
    pub enum SeriesAggFn {
        /// Average.
        Avg = "avg",
        /// Count.
        Count = "count",
        /// Count of distinct values.
        CountDistinct = "count_distinct",
        /// Last value.
        LastValue = "last_value",
        /// Maximum.
        Max = "max",
        /// Minimum.
        Min = "min",
        /// Quantile.
        Quantile = "quantile",
        /// Sum.
        Sum = "sum",
        /// Any value.
        Any = "any",
        /// No aggregation.
        None = "none",
        /// Increase of a counter over the interval.
        Increase = "increase",
    }
}

open_enum! {
    /// Display type of a series.
    pub enum SeriesType {
        /// Time chart.
        Time = "time",
        /// Table.
        Table = "table",
        /// Single number.
        Number = "number",
        /// Search results.
        Search = "search",
        /// Markdown text.
        Markdown = "markdown",
    }
}

open_enum! {
    /// Language of a series filter expression.
    pub enum WhereLanguage {
        /// Lucene syntax.
        Lucene = "lucene",
        /// SQL.
        Sql = "sql",
        /// PromQL.
        Promql = "promql",
    }
}

open_enum! {
    /// Data type of a metric.
    pub enum MetricDataType {
        /// Sum.
        Sum = "sum",
        /// Gauge.
        Gauge = "gauge",
        /// Histogram.
        Histogram = "histogram",
        /// Summary.
        Summary = "summary",
        /// Exponential histogram.
        ExponentialHistogram = "exponential histogram",
    }
}

open_enum! {
    /// Data source of a series.
    pub enum SeriesDataSource {
        /// Events (logs, traces).
        Events = "events",
        /// Metrics.
        Metrics = "metrics",
    }
}
