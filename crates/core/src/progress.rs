//! Progress a running call reports (MCP's `notifications/progress`): how
//! far it got, out of how much if known, and a message. It goes to the
//! registry's event hook (`EventKind::Progress`) and to the batch's
//! progress listener (`ExecOptions::progress`), which capstan's MCP server
//! sets when the client's request carried a `progressToken`; a mounted
//! server's progress for a forwarded call is reported the same way.
//!
//! Rules: the value is finite and not negative, and grows with every report
//! (MCP's "MUST increase"); a total, when given, is finite and positive; the
//! message is at most [`MAX_MESSAGE_BYTES`]. A report breaking one is
//! `InvalidArgument` and goes nowhere; one after the call has its result is
//! `AlreadyCompleted`.

use std::fmt;
use std::sync::Arc;

use crate::error::Error;

/// A progress message longer than this (in bytes) is refused.
/// cbindgen:ignore
pub const MAX_MESSAGE_BYTES: usize = 4096;

/// One progress report.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

impl Progress {
    /// Checks a report against the rules above; `last` is the call's
    /// previous value, if any.
    pub(crate) fn check(&self, last: Option<f64>) -> Result<(), Error> {
        let bad = |why: String| Err(Error::InvalidArgument(why));
        if !self.progress.is_finite() || self.progress < 0.0 {
            return bad(format!(
                "progress must be a finite number, not negative (got {})",
                self.progress
            ));
        }
        if let Some(total) = self.total {
            if !total.is_finite() || total <= 0.0 {
                return bad(format!(
                    "total must be a finite number above 0, or unknown (got {total})"
                ));
            }
        }
        if let Some(last) = last {
            if self.progress <= last {
                return bad(format!(
                    "progress must increase with every report: {} after {last}",
                    self.progress
                ));
            }
        }
        if let Some(m) = &self.message {
            if m.len() > MAX_MESSAGE_BYTES {
                return bad(format!(
                    "progress message is {} bytes, more than {MAX_MESSAGE_BYTES}",
                    m.len()
                ));
            }
        }
        Ok(())
    }
}

/// Hears the progress of a batch's calls: `(index of the call in its
/// batch, report)`. Runs on the thread that reported it; must be quick.
#[derive(Clone)]
pub struct ProgressListener(pub ProgressFn);

/// What a [`ProgressListener`] runs.
pub type ProgressFn = Arc<dyn Fn(usize, &Progress) + Send + Sync>;

impl fmt::Debug for ProgressListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressListener")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(progress: f64, total: Option<f64>) -> Progress {
        Progress {
            progress,
            total,
            message: None,
        }
    }

    #[test]
    fn progress_must_grow_be_finite_and_have_a_positive_total() {
        assert!(p(0.0, None).check(None).is_ok());
        assert!(p(2.0, Some(10.0)).check(Some(1.0)).is_ok());
        for (report, last) in [
            (p(1.0, None), Some(1.0)),
            (p(0.5, None), Some(1.0)),
            (p(f64::NAN, None), None),
            (p(-1.0, None), None),
            (p(1.0, Some(0.0)), None),
            (p(1.0, Some(f64::INFINITY)), None),
        ] {
            assert!(report.check(last).is_err(), "{report:?} after {last:?}");
        }
        let long = Progress {
            message: Some("x".repeat(MAX_MESSAGE_BYTES + 1)),
            ..p(1.0, None)
        };
        assert!(long.check(None).is_err());
    }
}
