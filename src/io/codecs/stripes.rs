//! Stripes coded in parallel and written in order as soon as they are ready: the writing of
//! stripe i overlaps the coding of later ones, and a written stripe's bytes are freed at once.
//! Stripes are taken in order (one counter, not a split range), so at most about one stripe per
//! thread waits for its turn: a split range would code the second half while the first is still
//! being written, and hold half the file's coded bytes (90 MB at 96 MP).

use crate::io::WriteCause;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// Runs `code(i)` for stripes `0..count` on rayon's pool, taken in order by every thread;
/// hands each result to `write` in stripe order, from whichever thread completes the run of
/// finished stripes. `progress` gets the
/// fraction coded. The first error (coding or writing) is returned.
pub(in crate::io) fn code_in_parallel_write_in_order<T: Send>(
    count: usize,
    code: impl Fn(usize) -> Result<T, WriteCause> + Sync,
    write: impl FnMut(usize, T) -> Result<(), WriteCause> + Send,
    progress: &(dyn Fn(f32) + Sync),
) -> Result<(), WriteCause> {
    struct Queue<T, W> {
        next: usize,
        done: usize,
        ready: BTreeMap<usize, T>,
        write: W,
        failed: Option<WriteCause>,
    }
    let queue = Mutex::new(Queue { next: 0, done: 0, ready: BTreeMap::new(), write, failed: None });
    let taken = AtomicUsize::new(0);
    let one = |i: usize| {
        if queue.lock().unwrap_or_else(PoisonError::into_inner).failed.is_some() {
            return;
        }
        let coded = code(i);
        let mut q = queue.lock().unwrap_or_else(PoisonError::into_inner);
        match coded {
            Err(e) => {
                q.failed.get_or_insert(e);
                return;
            }
            Ok(stripe) => {
                q.ready.insert(i, stripe);
            }
        }
        q.done += 1;
        progress(q.done as f32 / count as f32);
        while q.failed.is_none() {
            let next = q.next;
            let Some(stripe) = q.ready.remove(&next) else { break };
            if let Err(e) = (q.write)(next, stripe) {
                q.failed = Some(e);
            }
            q.next += 1;
        }
    };
    let take_in_order = || {
        loop {
            let i = taken.fetch_add(1, Ordering::Relaxed);
            if i >= count {
                break;
            }
            one(i);
        }
    };
    rayon::scope(|scope| {
        for _ in 1..rayon::current_num_threads().min(count) {
            scope.spawn(|_| take_in_order());
        }
        take_in_order();
    });
    let q = queue.into_inner().unwrap_or_else(PoisonError::into_inner);
    match q.failed {
        Some(e) => Err(e),
        None if q.next == count => Ok(()),
        None => Err(WriteCause::Encoder(format!("only {} of {count} stripes were written", q.next))),
    }
}

#[cfg(test)]
mod tests {
    use crate::io::codecs::stripes::*;

    #[test]
    fn stripes_are_written_in_order() {
        let mut written = Vec::new();
        code_in_parallel_write_in_order(
            200,
            |i| {
                // Uneven work, so stripes finish out of order.
                std::thread::sleep(std::time::Duration::from_micros(((i * 7919) % 13) as u64 * 50));
                Ok(i * 2)
            },
            |i, v| {
                written.push((i, v));
                Ok(())
            },
            &|_| (),
        )
        .expect("no error");
        assert_eq!(written, (0..200).map(|i| (i, i * 2)).collect::<Vec<_>>());
    }

    #[test]
    fn the_first_error_is_returned() {
        let result = code_in_parallel_write_in_order(
            50,
            |i| if i == 17 { Err(WriteCause::Encoder("stripe 17 failed".to_owned())) } else { Ok(i) },
            |_, _| Ok(()),
            &|_| (),
        );
        assert_eq!(result.map_err(|e| e.to_string()), Err("stripe 17 failed".to_owned()));
        let result = code_in_parallel_write_in_order(
            5,
            Ok,
            |i, _| {
                if i == 3 {
                    Err(std::io::Error::from(std::io::ErrorKind::StorageFull).into())
                } else {
                    Ok(())
                }
            },
            &|_| (),
        );
        // The operating system's error comes back whole: a full disk is recognisable.
        assert!(
            matches!(&result, Err(WriteCause::Os(e)) if e.kind() == std::io::ErrorKind::StorageFull),
            "{result:?}"
        );
    }
}
