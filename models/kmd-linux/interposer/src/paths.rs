//! Which paths concern the simulated GPU. Pure functions of the path bytes.
//!
//! Only absolute paths are recognised (a relative path, or one relative to a directory
//! descriptor, passes through: a directory opened in the fake tree already lies inside
//! it). Repeated slashes, `.` components and a trailing slash are ignored; a path with a
//! `..` component is never rewritten (it could leave the faked tree).

use std::borrow::Cow;

/// Faked trees and files: each with everything below it. `/sys/module/amdgpu` is where
/// `lsmod` looks for the module's `refcnt` and `holders`; `/sys/class/drm` leads to the
/// GPUs' PCI device directories (rocm-smi's device files), which exist only in the fake
/// root.
pub const FAKED_PREFIXES: [&str; 5] = [
    "/sys/devices/virtual/kfd",
    "/sys/class/kfd",
    "/proc/modules",
    "/sys/module/amdgpu",
    "/sys/class/drm",
];

/// The KFD device.
pub const KFD_PATH: &str = "/dev/kfd";

/// Render nodes: this prefix and a decimal minor.
pub const RENDER_PREFIX: &str = "/dev/dri/renderD";

/// What a path is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Class<'a> {
    /// Not ours.
    Other,
    /// A faked file or directory: the path below the fake root (no leading slash).
    Faked(Cow<'a, str>),
    /// `/dev/kfd`.
    Kfd,
    /// `/dev/dri/renderD<minor>` (simulated only if the backend has that minor).
    Render(u32),
}

/// Classifies an absolute path.
pub fn classify(path: &[u8]) -> Class<'_> {
    // Fast exit for everything outside /dev, /sys and /proc.
    let interesting = [&b"/dev/"[..], b"/sys/", b"/proc/", b"//"]
        .iter()
        .any(|p| path.starts_with(p));
    if !interesting {
        return Class::Other;
    }
    let Ok(text) = std::str::from_utf8(path) else {
        return Class::Other;
    };
    let Some(path) = normalize(text) else {
        return Class::Other;
    };
    if path == KFD_PATH {
        return Class::Kfd;
    }
    if let Some(minor) = path.strip_prefix(RENDER_PREFIX) {
        if !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(minor) = minor.parse::<u32>() {
                return Class::Render(minor);
            }
        }
        return Class::Other;
    }
    let faked = FAKED_PREFIXES.iter().any(|p| {
        path.strip_prefix(p)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    });
    if !faked {
        return Class::Other;
    }
    Class::Faked(match path {
        Cow::Borrowed(p) => Cow::Borrowed(&p[1..]),
        Cow::Owned(p) => Cow::Owned(p[1..].to_string()),
    })
}

/// `path` without repeated slashes, `.` components or a trailing slash; `None` when it
/// is relative or has a `..` component.
fn normalize(path: &str) -> Option<Cow<'_, str>> {
    if !path.starts_with('/') {
        return None;
    }
    let clean = !path.contains("//")
        && !path.contains("/./")
        && !path.ends_with("/.")
        && !path.ends_with('/');
    if clean {
        if path.split('/').any(|c| c == "..") {
            return None;
        }
        return Some(Cow::Borrowed(path));
    }
    let mut out = String::with_capacity(path.len());
    for component in path.split('/') {
        match component {
            "" | "." => {}
            ".." => return None,
            c => {
                out.push('/');
                out.push_str(c);
            }
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    Some(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn faked(rel: &str) -> Class<'_> {
        Class::Faked(Cow::Borrowed(rel))
    }

    #[test]
    fn devices() {
        assert_eq!(classify(b"/dev/kfd"), Class::Kfd);
        assert_eq!(classify(b"//dev/./kfd/"), Class::Kfd);
        assert_eq!(classify(b"/dev/dri/renderD128"), Class::Render(128));
        assert_eq!(classify(b"/dev/dri/renderD"), Class::Other);
        assert_eq!(classify(b"/dev/dri/renderD12x"), Class::Other);
        assert_eq!(classify(b"/dev/dri/renderD99999999999"), Class::Other);
        assert_eq!(classify(b"/dev/dri/card0"), Class::Other);
        assert_eq!(classify(b"/dev/kfd0"), Class::Other);
        assert_eq!(classify(b"dev/kfd"), Class::Other);
        assert_eq!(classify(b"/dev/null"), Class::Other);
    }

    #[test]
    fn faked_trees() {
        assert_eq!(classify(b"/proc/modules"), faked("proc/modules"));
        assert_eq!(classify(b"/proc/modules2"), Class::Other);
        assert_eq!(classify(b"/proc/self/maps"), Class::Other);
        assert_eq!(classify(b"/sys/class/kfd"), faked("sys/class/kfd"));
        assert_eq!(
            classify(b"/sys/class/kfd/kfd/topology/nodes/1/properties"),
            faked("sys/class/kfd/kfd/topology/nodes/1/properties")
        );
        assert_eq!(classify(b"/sys/class/kfdx"), Class::Other);
        assert_eq!(classify(b"/sys/class"), Class::Other);
        assert_eq!(
            classify(b"/sys/devices/virtual/kfd/kfd/topology/generation_id"),
            faked("sys/devices/virtual/kfd/kfd/topology/generation_id")
        );
        assert_eq!(
            classify(b"/sys/devices/virtual/kfd/"),
            faked("sys/devices/virtual/kfd")
        );
        assert_eq!(
            classify(b"//sys//class/./kfd/kfd/topology/"),
            Class::Faked(Cow::Owned("sys/class/kfd/kfd/topology".into()))
        );
        assert_eq!(
            classify(b"/sys/class/kfd/../../../etc/passwd"),
            Class::Other
        );
        assert_eq!(classify(b"/sys/class/kfd/kfd/.."), Class::Other);
        assert_eq!(classify(b"/sys/class/drm"), faked("sys/class/drm"));
        assert_eq!(
            classify(b"/sys/class/drm/card0/device/mem_info_vram_used"),
            faked("sys/class/drm/card0/device/mem_info_vram_used")
        );
        assert_eq!(classify(b"/sys/class/drmx"), Class::Other);
        assert_eq!(classify(b"/sys/devices/pci0000:00"), Class::Other);
        assert_eq!(
            classify(b"/sys/module/amdgpu/holders"),
            faked("sys/module/amdgpu/holders")
        );
        assert_eq!(classify(b"/sys/module/amdgpu_x"), Class::Other);
        assert_eq!(classify(b"/sys/class/kfd/\xff"), Class::Other);
    }

    #[test]
    fn other_paths_are_not_looked_at() {
        for p in [
            &b"/etc/passwd"[..],
            b"",
            b"/",
            b"relative/sys/class/kfd",
            b"/usr/lib/x86_64-linux-gnu/libc.so.6",
        ] {
            assert_eq!(
                classify(p),
                Class::Other,
                "{:?}",
                String::from_utf8_lossy(p)
            );
        }
    }
}
