//! The transport of the GPU service: a Unix SOCK_SEQPACKET socket carries
//! fixed-size headers (and, when a side grows it, the file descriptor of a
//! new shared region); request and reply payloads live in a memfd region
//! both processes map, so chunks are never copied through the socket.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

use crate::error::DeviceError;

/// First word of every header.
pub const MAGIC: u32 = 0x5053_5631; // "PSV1"

/// What travels on the socket, both ways.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Header {
    /// [`MAGIC`].
    pub magic: u32,
    /// Requests: the operation (OP_*); replies: 0 ok, 1 error.
    pub op: u32,
    /// Requests: which engine (device index, or [`super::CPU_ENGINE`]).
    pub engine: u32,
    /// Join session the request is about (0: none).
    pub session: u32,
    /// Payload bytes at the start of the region.
    pub len: u64,
    /// Size of the region whose descriptor comes with this message (0: none).
    pub region: u64,
}

const HEADER_LEN: usize = std::mem::size_of::<Header>();

fn os_error(what: &str) -> DeviceError {
    DeviceError::Service(format!("{what}: {}", std::io::Error::last_os_error()))
}

/// A shared memory region: a memfd mapped read-write.
pub struct Region {
    fd: OwnedFd,
    ptr: *mut u8,
    size: usize,
}

// SAFETY: the mapping is owned by the Region; callers serialise access
// (one request in flight per connection).
unsafe impl Send for Region {}

impl Region {
    /// A new region of `size` bytes (pages are allocated when touched).
    pub fn create(size: usize) -> Result<Region, DeviceError> {
        let size = size.max(4096).next_multiple_of(4096);
        // SAFETY: plain system calls with valid arguments.
        unsafe {
            let fd = libc::memfd_create(c"pg_strom".as_ptr(), libc::MFD_CLOEXEC);
            if fd < 0 {
                return Err(os_error("memfd_create"));
            }
            let fd = OwnedFd::from_raw_fd(fd);
            if libc::ftruncate(fd.as_raw_fd(), size as libc::off_t) != 0 {
                return Err(os_error("ftruncate of a shared region"));
            }
            Region::map(fd, size)
        }
    }

    /// Map a region received from the other side.
    pub fn map(fd: OwnedFd, size: usize) -> Result<Region, DeviceError> {
        // SAFETY: fstat into a zeroed struct; mmap of a descriptor we own.
        unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(fd.as_raw_fd(), &mut st) != 0 {
                return Err(os_error("fstat of a shared region"));
            }
            if (st.st_size as u64) < size as u64 || size == 0 {
                return Err(DeviceError::Service(format!(
                    "shared region of {} bytes is smaller than announced ({size})",
                    st.st_size
                )));
            }
            let p = libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            );
            if p == libc::MAP_FAILED {
                return Err(os_error("mmap of a shared region"));
            }
            Ok(Region { fd, ptr: p.cast(), size })
        }
    }

    /// Its size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Its descriptor (sent to the other side).
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The whole region.
    ///
    /// The other process writes it only while this one waits for its
    /// answer, so a slice taken between a receive and the next send is
    /// stable.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the mapping is `size` bytes and lives as long as self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.size) }
    }

    /// The whole region, to write.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above; &mut self gives exclusive use in this process.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.size) }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: the mapping came from mmap with this size.
        unsafe { libc::munmap(self.ptr.cast(), self.size) };
    }
}

/// A SOCK_SEQPACKET socket.
pub struct Socket(OwnedFd);

impl Socket {
    /// Its descriptor (for poll).
    pub fn raw_fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    fn open_fd() -> Result<OwnedFd, DeviceError> {
        // SAFETY: plain system call.
        let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(os_error("socket"));
        }
        // SAFETY: a descriptor we just created.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    fn addr(path: &Path) -> Result<(libc::sockaddr_un, libc::socklen_t), DeviceError> {
        let c = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| DeviceError::Service("socket path contains a NUL byte".into()))?;
        // SAFETY: sockaddr_un is plain data.
        let mut sa: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        let b = c.as_bytes_with_nul();
        if b.len() > sa.sun_path.len() {
            return Err(DeviceError::Service(format!("socket path {} is too long", path.display())));
        }
        sa.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (d, s) in sa.sun_path.iter_mut().zip(b) {
            *d = *s as libc::c_char;
        }
        Ok((sa, std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t))
    }

    /// Listen at `path` (a stale socket file there is removed first).
    pub fn listen(path: &Path) -> Result<Socket, DeviceError> {
        let fd = Self::open_fd()?;
        let (sa, len) = Self::addr(path)?;
        let _ = std::fs::remove_file(path);
        // SAFETY: a valid address of `len` bytes.
        unsafe {
            if libc::bind(fd.as_raw_fd(), (&sa as *const libc::sockaddr_un).cast(), len) != 0 {
                return Err(os_error(&format!("bind {}", path.display())));
            }
            if libc::listen(fd.as_raw_fd(), 128) != 0 {
                return Err(os_error("listen"));
            }
        }
        Ok(Socket(fd))
    }

    /// Connect to `path` once.
    pub fn connect(path: &Path) -> Result<Socket, DeviceError> {
        let fd = Self::open_fd()?;
        let (sa, len) = Self::addr(path)?;
        // SAFETY: a valid address of `len` bytes.
        if unsafe { libc::connect(fd.as_raw_fd(), (&sa as *const libc::sockaddr_un).cast(), len) } != 0 {
            return Err(os_error(&format!("connect to {}", path.display())));
        }
        Ok(Socket(fd))
    }

    /// Accept one connection.
    pub fn accept(&self) -> Result<Socket, DeviceError> {
        loop {
            // SAFETY: a listening socket; no address wanted.
            let fd = unsafe {
                libc::accept4(self.0.as_raw_fd(), std::ptr::null_mut(), std::ptr::null_mut(), libc::SOCK_CLOEXEC)
            };
            if fd >= 0 {
                // SAFETY: a descriptor accept just returned.
                return Ok(Socket(unsafe { OwnedFd::from_raw_fd(fd) }));
            }
            if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                return Err(os_error("accept"));
            }
        }
    }

    /// Send a header, with a region's descriptor when `fd` is given.
    pub fn send(&self, h: &Header, fd: Option<RawFd>) -> Result<(), DeviceError> {
        let mut iov = libc::iovec { iov_base: (h as *const Header).cast_mut().cast(), iov_len: HEADER_LEN };
        // room for one descriptor, aligned as cmsghdr needs
        let mut cbuf = [0u64; 8];
        // SAFETY: msghdr and cmsg built within `cbuf`; sendmsg reads them.
        unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            if let Some(fd) = fd {
                let space = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as usize;
                msg.msg_control = cbuf.as_mut_ptr().cast();
                msg.msg_controllen = space as _;
                let c = libc::CMSG_FIRSTHDR(&msg);
                (*c).cmsg_level = libc::SOL_SOCKET;
                (*c).cmsg_type = libc::SCM_RIGHTS;
                (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
                std::ptr::write_unaligned(libc::CMSG_DATA(c) as *mut RawFd, fd);
            }
            loop {
                let n = libc::sendmsg(self.0.as_raw_fd(), &msg, libc::MSG_NOSIGNAL);
                if n == HEADER_LEN as isize {
                    return Ok(());
                }
                if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(lost(if n < 0 { os_error("send") } else { DeviceError::Service("short send".into()) }));
            }
        }
    }

    /// Wait up to `ms` milliseconds for something to read (or the peer
    /// closing): true when there is.
    pub fn wait_readable(&self, ms: i32) -> Result<bool, DeviceError> {
        let mut p = libc::pollfd { fd: self.0.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut p, 1, ms) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                return Ok(false);
            }
            return Err(lost(os_error("poll")));
        }
        Ok(n > 0)
    }

    /// Receive a header and the descriptor that came with it.  The peer
    /// closing the connection is [`DeviceError::ServiceLost`].
    pub fn recv(&self) -> Result<(Header, Option<OwnedFd>), DeviceError> {
        let mut h = Header::default();
        let mut iov = libc::iovec { iov_base: (&mut h as *mut Header).cast(), iov_len: HEADER_LEN };
        let mut cbuf = [0u64; 8];
        // SAFETY: recvmsg writes into `h` and `cbuf`, both large enough.
        unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = cbuf.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&cbuf) as _;
            let n = loop {
                let n = libc::recvmsg(self.0.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
                if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                break n;
            };
            if n < 0 {
                return Err(lost(os_error("receive")));
            }
            let mut fd = None;
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                    let raw = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const RawFd);
                    fd = Some(OwnedFd::from_raw_fd(raw));
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
            if n == 0 {
                return Err(DeviceError::ServiceLost("the GPU service closed the connection".into()));
            }
            if n as usize != HEADER_LEN || h.magic != MAGIC {
                return Err(DeviceError::Service(format!("malformed message of {n} bytes")));
            }
            Ok((h, fd))
        }
    }
}

fn lost(e: DeviceError) -> DeviceError {
    match e {
        DeviceError::Service(m) => DeviceError::ServiceLost(m),
        e => e,
    }
}
