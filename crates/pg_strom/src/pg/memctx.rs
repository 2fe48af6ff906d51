//! Memory contexts: creating one, switching to one for a scope (restored
//! on every exit, early returns and panics included), and freeing Rust
//! state when a context is reset or deleted.

use std::ffi::CStr;

use pgrx::pg_sys;

/// A new AllocSet context under `parent`, with PostgreSQL's default sizes.
pub(crate) fn new_context(parent: pg_sys::MemoryContext, name: &'static CStr) -> pg_sys::MemoryContext {
    // SAFETY: a child of a live context; the name is static, as
    // AllocSetContextCreate requires.
    unsafe {
        pg_sys::AllocSetContextCreateInternal(
            parent,
            name.as_ptr(),
            pg_sys::ALLOCSET_DEFAULT_MINSIZE as usize,
            pg_sys::ALLOCSET_DEFAULT_INITSIZE as usize,
            pg_sys::ALLOCSET_DEFAULT_MAXSIZE as usize,
        )
    }
}

/// `CurrentMemoryContext` switched to another context until this guard
/// drops, which switches back to the one before.
#[must_use = "the context is switched back when the guard drops"]
pub struct Switched {
    old: pg_sys::MemoryContext,
}

impl Switched {
    /// Make `cxt` the current memory context for the guard's scope.
    ///
    /// # Safety
    /// `cxt` is a live context that outlives the guard.
    pub unsafe fn to(cxt: pg_sys::MemoryContext) -> Switched {
        // SAFETY: a live context (caller); switching is a pointer swap.
        Switched { old: unsafe { pg_sys::MemoryContextSwitchTo(cxt) } }
    }
}

impl Drop for Switched {
    fn drop(&mut self) {
        // SAFETY: the context current before the guard; it outlives the
        // guard's scope (it was current when the scope began).
        unsafe { pg_sys::MemoryContextSwitchTo(self.old) };
    }
}

/// Call `func(arg)` when `cxt` is reset or deleted (a query's end, by
/// success or ERROR).  The callback record lives in `cxt` itself.
///
/// # Safety
/// `cxt` is live; `arg` stays valid until the callback runs (or is
/// ignored by `func` once its owner is gone).
pub unsafe fn on_reset(
    cxt: pg_sys::MemoryContext,
    func: unsafe extern "C-unwind" fn(*mut std::ffi::c_void),
    arg: *mut std::ffi::c_void,
) {
    // SAFETY: caller's promise; the record is allocated in `cxt`, which
    // frees it after running the callback.
    unsafe {
        let cb = pg_sys::MemoryContextAlloc(cxt, std::mem::size_of::<pg_sys::MemoryContextCallback>())
            as *mut pg_sys::MemoryContextCallback;
        (*cb).func = Some(func);
        (*cb).arg = arg;
        (*cb).next = std::ptr::null_mut();
        pg_sys::MemoryContextRegisterResetCallback(cxt, cb);
    }
}
