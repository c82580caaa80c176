//! How the items of two arrays of one member pair up for a comparison: item by item, by a key
//! member (`x-compare: {key: name}`: columns by name, whatever their order), or as a set
//! (`x-compare: set`: order and repeats mean nothing).

use api_core::raw::support::schema::Comparison;
use serde_json::Value;

use super::respell::respelled;

/// Where an item is in its array: its index, or its key member's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum At<'v> {
    /// The item at this index.
    Index(usize),
    /// The item whose member `.0` is `.1`.
    Key(&'v str, &'v str),
}

impl<'v> At<'v> {
    /// The path segment that names the item: `[2]`, `[name=id]`.
    pub(crate) fn segment(&self) -> String {
        match self {
            Self::Index(i) => format!("[{i}]"),
            Self::Key(key, value) => format!("[{key}={value}]"),
        }
    }

    /// The item of `array` at this place, if there is one.
    pub(crate) fn find<'a>(&self, array: Option<&'a Value>) -> Option<&'a Value> {
        self.find_in(array?.as_array()?)
    }

    /// The item of `items` at this place, if there is one.
    fn find_in<'a>(&self, items: &'a [Value]) -> Option<&'a Value> {
        match self {
            Self::Index(i) => items.get(*i),
            Self::Key(key, value) => items.iter().find(|item| key_of(item, key) == Some(value)),
        }
    }

    /// The item of `array` at this place, to write into.
    pub(crate) fn find_mut<'a>(&self, array: &'a mut Value) -> Option<&'a mut Value> {
        let items = array.as_array_mut()?;
        match self {
            Self::Index(i) => items.get_mut(*i),
            Self::Key(key, value) => items
                .iter_mut()
                .find(|item| key_of(item, key) == Some(value)),
        }
    }
}

/// One pair of items: where they are, the old one and the new one (`None`: that side lacks it).
pub(crate) type Pair<'v> = (At<'v>, Option<&'v Value>, Option<&'v Value>);

/// The items of `old` and `new` paired: item by item when the comparison is
/// [`Exact`](Comparison::Exact) (only for arrays of one length: `None` otherwise, to be compared
/// whole), by their key member when it is [`Keyed`](Comparison::Keyed) (an item on one side only
/// pairs with `None`; `old`'s order first, then the items `new` adds), item by item again when an
/// item lacks its key or two share one. `None` for a set, compared whole.
pub(crate) fn pairs<'v>(
    old: &'v [Value],
    new: &'v [Value],
    comparison: Comparison<'v>,
) -> Option<Vec<Pair<'v>>> {
    let by_index = || {
        (old.len() == new.len()).then(|| {
            old.iter()
                .zip(new)
                .enumerate()
                .map(|(i, (o, n))| (At::Index(i), Some(o), Some(n)))
                .collect()
        })
    };
    match comparison {
        Comparison::Set => None,
        Comparison::Keyed(key) => {
            let (Some(old_keys), Some(new_keys)) = (keys(old, key), keys(new, key)) else {
                return by_index();
            };
            let mut paired: Vec<_> = old
                .iter()
                .zip(&old_keys)
                .map(|(item, value)| {
                    let at = At::Key(key, value);
                    (at, Some(item), at.find_in(new))
                })
                .collect();
            paired.extend(
                new.iter()
                    .zip(&new_keys)
                    .filter(|(_, value)| !old_keys.contains(value))
                    .map(|(item, value)| (At::Key(key, value), None, Some(item))),
            );
            Some(paired)
        }
        _ => by_index(),
    }
}

/// The key member's value of each item, when every item has one (a string) and no two share it.
fn keys<'v>(items: &'v [Value], key: &str) -> Option<Vec<&'v str>> {
    let keys: Vec<&str> = items
        .iter()
        .map(|item| key_of(item, key))
        .collect::<Option<_>>()?;
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    sorted.dedup();
    (sorted.len() == keys.len()).then_some(keys)
}

fn key_of<'v>(item: &'v Value, key: &str) -> Option<&'v str> {
    item.get(key)?.as_str()
}

/// What two arrays compared as sets are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SetOf {
    /// The same items in the same order.
    Same,
    /// The same items, in another order or each written again ([`respelled`]).
    Respelled,
    /// Other items.
    Different,
}

/// `old` and `new` as sets of items compared with `items` (each item paired with one of the other
/// side that is the same value, else one that respells it).
pub(crate) fn as_sets(
    old: &[Value],
    new: &[Value],
    items: Comparison<'_>,
    same: impl Fn(&Value, &Value) -> bool,
) -> SetOf {
    if old.len() == new.len() && old.iter().zip(new).all(|(o, n)| same(o, n)) {
        return SetOf::Same;
    }
    if old.len() != new.len() {
        return SetOf::Different;
    }
    let mut unused: Vec<&Value> = new.iter().collect();
    for was in old {
        let found = unused
            .iter()
            .position(|is| same(was, is))
            .or_else(|| unused.iter().position(|is| respelled(was, is, items)));
        match found {
            Some(i) => {
                unused.swap_remove(i);
            }
            None => return SetOf::Different,
        }
    }
    SetOf::Respelled
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keyed_items_pair_by_their_key_whatever_their_order() {
        let old = json!([{"name": "a", "type": "X"}, {"name": "b", "type": "Y"}]);
        let new = json!([{"name": "c"}, {"name": "b", "type": "Y"}, {"name": "a", "type": "X"}]);
        let (old, new) = (old.as_array().unwrap(), new.as_array().unwrap());
        let paired = pairs(old, new, Comparison::Keyed("name")).unwrap();
        let shown: Vec<(String, bool, bool)> = paired
            .iter()
            .map(|(at, o, n)| (at.segment(), o.is_some(), n.is_some()))
            .collect();
        assert_eq!(
            shown,
            [
                ("[name=a]".to_string(), true, true),
                ("[name=b]".to_string(), true, true),
                ("[name=c]".to_string(), false, true),
            ]
        );
        assert_eq!(paired[0].2, Some(&new[2]));
        // A repeated key: item by item, as without a key (different lengths: compared whole).
        let repeated = json!([{"name": "a"}, {"name": "a"}]);
        assert!(pairs(repeated.as_array().unwrap(), new, Comparison::Keyed("name")).is_none());
        assert_eq!(
            pairs(
                repeated.as_array().unwrap(),
                &new[..2],
                Comparison::Keyed("name")
            )
            .unwrap()
            .len(),
            2
        );
    }

    #[test]
    fn sets_ignore_order_and_respellings_but_not_other_items() {
        let same = |a: &Value, b: &Value| a == b;
        let ids = |v: Value| v.as_array().unwrap().clone();
        let (a, b) = (
            ids(json!(["0f9e8d7c-aaaa", "1a2b3c4d-bbbb"])),
            ids(json!(["1A2B3C4D-BBBB", "0f9e8d7c-aaaa"])),
        );
        assert_eq!(
            as_sets(&a, &a, Comparison::CaseInsensitive, same),
            SetOf::Same
        );
        assert_eq!(
            as_sets(&a, &b, Comparison::CaseInsensitive, same),
            SetOf::Respelled
        );
        assert_eq!(as_sets(&a, &b, Comparison::Exact, same), SetOf::Different);
        assert_eq!(
            as_sets(&a, &a[..1], Comparison::CaseInsensitive, same),
            SetOf::Different
        );
    }
}
