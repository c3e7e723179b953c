//! Error scopes around graylab's own GPU work. wgpu 30 keeps scopes per thread, so errors from
//! this thread's calls land here and eframe's render thread (and its handler) never see them;
//! nothing device-wide is installed.

use crate::gpu::GpuError;

/// Validation, out-of-memory and internal error scopes pushed on this thread's stack.
pub(crate) struct ErrorScopes<'a> {
    device: &'a wgpu::Device,
    /// Innermost last, as pushed.
    guards: Vec<wgpu::ErrorScopeGuard>,
}

impl<'a> ErrorScopes<'a> {
    /// Pushes the three scopes.
    pub(crate) fn push(device: &'a wgpu::Device) -> Self {
        let guards =
            [wgpu::ErrorFilter::Internal, wgpu::ErrorFilter::OutOfMemory, wgpu::ErrorFilter::Validation]
                .into_iter()
                .map(|filter| device.push_error_scope(filter))
                .collect();
        Self { device, guards }
    }

    /// Runs `f` inside fresh scopes: its error first, else theirs.
    pub(crate) fn around<T>(
        device: &'a wgpu::Device,
        f: impl FnOnce(&mut Self) -> Result<T, GpuError>,
    ) -> Result<T, GpuError> {
        let mut scopes = Self::push(device);
        let result = f(&mut scopes);
        let caught = scopes.finish();
        result.and_then(|v| caught.map(|()| v))
    }

    /// Pops the scopes and returns the first error they caught, if any.
    pub(crate) fn finish(self) -> Result<(), GpuError> {
        self.first_error().map_or(Ok(()), |e| Err(e.into()))
    }

    /// Pops the scopes: the first error they caught, as wgpu reported it.
    pub(crate) fn first_error(mut self) -> Option<wgpu::Error> {
        let mut first = None;
        while let Some(guard) = self.guards.pop() {
            if let Some(e) = pollster::block_on(guard.pop()) {
                first.get_or_insert(e);
            }
        }
        first
    }

    /// Pops the scopes, then pushes fresh ones: returns what was caught so far.
    pub(crate) fn check(&mut self) -> Result<(), GpuError> {
        let done = Self { device: self.device, guards: std::mem::take(&mut self.guards) };
        let result = done.finish();
        *self = Self::push(self.device);
        result
    }
}
