//! The driver's timer, at the kernel's resolution.
//!
//! tokio's own timer counts whole milliseconds and rounds a deadline up to
//! the next one, so every protocol timer (T3-rtx, the delayed SACK, the tail
//! loss probe) fired up to a millisecond late: through the emulator, a lost
//! message recovered by a delayed SACK and then T3 arrived 2 to 3 ms later
//! than the simulator's exact timeline. On Linux a timerfd on
//! `CLOCK_MONOTONIC`, polled by tokio's reactor, fires at the deadline
//! itself; elsewhere tokio's timer remains.

use std::time::Instant;

#[cfg(target_os = "linux")]
mod imp {
    use std::io;
    use std::os::fd::{AsFd, AsRawFd, RawFd};
    use std::time::Instant;

    use nix::sys::time::TimeSpec;
    use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
    use tokio::io::unix::AsyncFd;

    /// A timerfd, as tokio's reactor wants it.
    struct Fd(TimerFd);

    impl AsRawFd for Fd {
        fn as_raw_fd(&self) -> RawFd {
            self.0.as_fd().as_raw_fd()
        }
    }

    pub(crate) struct Timer {
        fd: AsyncFd<Fd>,
    }

    impl Timer {
        // The one unsafe call of the crate: tokio's registration of a file
        // descriptor it does not own. brisk-proto has none.
        #[allow(unsafe_code)]
        pub(crate) fn new() -> io::Result<Self> {
            let fd = TimerFd::new(
                ClockId::CLOCK_MONOTONIC,
                TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
            )?;
            // SAFETY: `Fd` owns its timerfd and always returns that same
            // descriptor from `as_raw_fd`; the `AsyncFd` owns the `Fd`, so
            // the descriptor stays open for as long as it is registered.
            let fd = unsafe { AsyncFd::register(Fd(fd)) }.map_err(io::Error::from)?;
            Ok(Self { fd })
        }

        /// Waits until `at` (at once if it has passed).
        pub(crate) async fn sleep_until(&self, at: Instant) -> io::Result<()> {
            let left = at.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            // A zero one-shot would disarm the timer; `left` is above zero.
            self.fd
                .get_ref()
                .0
                .set(
                    Expiration::OneShot(TimeSpec::from_duration(left)),
                    TimerSetTimeFlags::empty(),
                )
                .map_err(io::Error::from)?;
            loop {
                let mut ready = self.fd.readable().await?;
                // Reading the expiration count clears the readiness.
                match ready.try_io(|fd| fd.get_ref().0.wait().map_err(io::Error::from)) {
                    Ok(result) => return result,
                    Err(_would_block) => continue,
                }
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::io;
    use std::time::Instant;

    pub(crate) struct Timer;

    impl Timer {
        pub(crate) fn new() -> io::Result<Self> {
            Ok(Self)
        }

        pub(crate) async fn sleep_until(&self, at: Instant) -> io::Result<()> {
            tokio::time::sleep_until(at.into()).await;
            Ok(())
        }
    }
}

/// The driver's one timer: re-armed for each wait.
pub(crate) struct Timer(imp::Timer);

impl Timer {
    pub(crate) fn new() -> std::io::Result<Self> {
        imp::Timer::new().map(Self)
    }

    /// Waits until `at`. Should the timerfd fail, tokio's timer waits
    /// instead: late by up to a millisecond, never lost.
    pub(crate) async fn sleep_until(&self, at: Instant) {
        if self.0.sleep_until(at).await.is_err() {
            tokio::time::sleep_until(at.into()).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(flavor = "current_thread")]
    async fn it_fires_at_the_deadline_and_not_on_a_millisecond_boundary_later() {
        let timer = Timer::new().unwrap();
        let mut late = Vec::new();
        for i in 0..20u64 {
            let at = Instant::now() + Duration::from_micros(1_300 + i * 37);
            timer.sleep_until(at).await;
            let now = Instant::now();
            assert!(now >= at, "fired early by {:?}", at - now);
            late.push(now - at);
        }
        late.sort();
        // tokio's timer would round each of these up to the next whole
        // millisecond: about 0.5 ms late on average. The median here is the
        // kernel's wake-up latency.
        assert!(late[10] < Duration::from_micros(400), "{late:?}");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_deadline_in_the_past_returns_at_once() {
        let timer = Timer::new().unwrap();
        let t = Instant::now();
        timer.sleep_until(t - Duration::from_millis(5)).await;
        timer.sleep_until(t).await;
        assert!(t.elapsed() < Duration::from_millis(50));
    }
}
