//! A column of labels from a small set (a drop's cause, an event's reason): each row holds a
//! 4-byte code into the set of labels in the order they first appeared, not a 16-byte
//! `&'static str`, so the logs that hold three such columns take half the memory. The
//! column reads like a `Vec<&'static str>`: `labels[i]`, [`Labels::iter`], `len`.

use std::ops::Index;

/// Labels, one per row, stored as codes into the distinct labels seen.
#[derive(Clone, Default)]
pub struct Labels {
    /// The distinct labels, in the order of their first row.
    names: Vec<&'static str>,
    /// Per row: an index into `names`.
    codes: Vec<u32>,
}

impl Labels {
    /// Appends a row.
    #[inline]
    pub fn push(&mut self, label: &'static str) {
        let code = match self.names.iter().position(|n| *n == label) {
            Some(c) => c,
            None => {
                self.names.push(label);
                self.names.len() - 1
            }
        };
        // At most one name per row, and rows are bounded by the recording limit (bytes).
        self.codes.push(code as u32);
    }

    pub fn len(&self) -> usize {
        self.codes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    /// The rows' labels in order (as a `Vec<&'static str>`'s `iter` gives them).
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &&'static str> + Clone + '_ {
        self.codes.iter().map(|&c| &self.names[c as usize])
    }

    /// Whether a row holds `label`.
    pub fn contains(&self, label: &str) -> bool {
        self.names
            .iter()
            .position(|n| *n == label)
            .is_some_and(|c| self.codes.contains(&(c as u32)))
    }

    /// Keeps the first `n` rows.
    pub fn truncate(&mut self, n: usize) {
        self.codes.truncate(n);
    }

    /// Frees the room beyond the rows (as `Vec::shrink_to_fit`).
    pub fn shrink_to_fit(&mut self) {
        self.codes.shrink_to_fit();
    }

    /// Rows the column holds room for.
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.codes.capacity()
    }
}

impl Index<usize> for Labels {
    type Output = &'static str;

    fn index(&self, i: usize) -> &&'static str {
        &self.names[self.codes[i] as usize]
    }
}

/// Equal when the rows' labels are, whatever the codes.
impl PartialEq for Labels {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl PartialEq<[&str]> for Labels {
    fn eq(&self, other: &[&str]) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, b)| a == b)
    }
}

impl<const N: usize> PartialEq<[&str; N]> for Labels {
    fn eq(&self, other: &[&str; N]) -> bool {
        *self == other[..]
    }
}

impl PartialEq<Vec<&str>> for Labels {
    fn eq(&self, other: &Vec<&str>) -> bool {
        *self == other[..]
    }
}

impl std::fmt::Debug for Labels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl From<Vec<&'static str>> for Labels {
    fn from(v: Vec<&'static str>) -> Self {
        v.into_iter().collect()
    }
}

impl FromIterator<&'static str> for Labels {
    fn from_iter<I: IntoIterator<Item = &'static str>>(it: I) -> Self {
        let mut l = Labels::default();
        for s in it {
            l.push(s);
        }
        l
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_like_the_strings_it_was_given() {
        let rows = ["loss", "ack", "loss", "queue", "ack"];
        let l: Labels = rows.iter().copied().collect();
        assert_eq!(l.len(), 5);
        assert_eq!(l, rows);
        assert!(l.contains("queue") && !l.contains("none"));
        assert_eq!(l[3], "queue");
        assert_eq!(l.names.len(), 3);
        // Equality is by the labels, not the codes.
        let other: Labels = ["ack", "loss"].iter().copied().collect();
        let mut same: Labels = other.clone();
        same.codes.clear();
        for s in rows {
            same.push(s);
        }
        assert_eq!(same, l);
        assert_ne!(other, l);
        assert_eq!(format!("{l:?}"), format!("{rows:?}"));
    }
}
