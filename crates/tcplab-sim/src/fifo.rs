//! A first-in first-out ring buffer of `Copy` items whose operations are always inlined:
//! the link directions' propagating packets, pushed and popped once per packet and hop.
//! (`VecDeque::push_back` there became an out-of-line call in some builds, depending on how
//! the release build split the crate into codegen units.)

/// The FIFO. Its storage's length is 0 or a power of two; item `i` (0 = the oldest) is at
/// `(head + i) & (storage length - 1)`.
#[derive(Clone, Debug)]
pub struct Fifo<T> {
    buf: Vec<T>,
    head: usize,
    len: usize,
}

impl<T: Copy> Default for Fifo<T> {
    fn default() -> Self {
        Fifo {
            buf: Vec::new(),
            head: 0,
            len: 0,
        }
    }
}

impl<T: Copy> Fifo<T> {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn slot(&self, i: usize) -> usize {
        (self.head + i) & self.buf.len().wrapping_sub(1)
    }

    /// Appends `x` (the newest).
    #[inline(always)]
    pub fn push_back(&mut self, x: T) {
        if self.len == self.buf.len() {
            self.grow(x);
        }
        let i = self.slot(self.len);
        self.buf[i] = x;
        self.len += 1;
    }

    /// Doubles the storage (at least 8), the items kept in order from the start; `fill`
    /// fills the free slots.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, fill: T) {
        let cap = (self.buf.len() * 2).max(8);
        let mut buf = Vec::with_capacity(cap);
        buf.extend(self.iter());
        buf.resize(cap, fill);
        self.buf = buf;
        self.head = 0;
    }

    /// Removes and returns the oldest item.
    #[inline(always)]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let x = self.buf[self.head];
        self.head = self.slot(1);
        self.len -= 1;
        Some(x)
    }

    /// The oldest item.
    #[inline(always)]
    pub fn front(&self) -> Option<&T> {
        (self.len > 0).then(|| &self.buf[self.head])
    }

    /// The newest item.
    #[inline(always)]
    pub fn back(&self) -> Option<&T> {
        (self.len > 0).then(|| &self.buf[self.slot(self.len - 1)])
    }

    /// The items, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        (0..self.len).map(move |i| self.buf[self.slot(i)])
    }
}

#[cfg(test)]
mod tests {
    use super::Fifo;
    use std::collections::VecDeque;

    #[test]
    fn behaves_as_a_vecdeque_through_wrap_around_and_growth() {
        let mut f = Fifo::new();
        let mut d = VecDeque::new();
        let mut x: u64 = 7;
        for step in 0..5000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Pushes a little more often than pops: the FIFO grows while wrapping around.
            if (x >> 33) % 5 < 3 {
                f.push_back(step);
                d.push_back(step);
            } else {
                assert_eq!(f.pop_front(), d.pop_front());
            }
            assert_eq!((f.len(), f.is_empty()), (d.len(), d.is_empty()));
            assert_eq!((f.front(), f.back()), (d.front(), d.back()));
        }
        assert!(f.iter().eq(d.iter().copied()));
    }
}
