//! HTTPS mounts are the opt-in feature `mcp-https` (issue #28): the default
//! `mcp` build carries no TLS stack, and says so for an https:// url instead
//! of failing to connect. With the feature, such a url gets past that check
//! and fails only on the connection (`cargo test --features mcp-https --test
//! mcp_https`).
#![cfg(feature = "mcp")]

use std::ffi::CString;
use std::ptr;

use capstan::ffi::*;

fn last_error() -> String {
    let mut buf = [0u8; 512];
    let n = unsafe { capstan_error_message(buf.as_mut_ptr().cast(), buf.len()) };
    String::from_utf8_lossy(&buf[..n.min(buf.len() - 1)]).into_owned()
}

/// A local port nobody listens on (bound, then released).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Mounts `url` into a fresh registry: the status and the error message.
fn mount(url: &str) -> (capstan_status, String) {
    let url = CString::new(url).unwrap();
    unsafe {
        let mut reg = ptr::null_mut();
        assert_eq!(capstan_registry_new(ptr::null(), &mut reg), CAPSTAN_OK);
        let mut opts = std::mem::zeroed::<capstan_mcp_mount_options>();
        opts.struct_size = std::mem::size_of::<capstan_mcp_mount_options>() as u32;
        opts.url = url.as_ptr();
        opts.connect_timeout_ms = 5000;
        let mut out = ptr::null_mut();
        let status = capstan_mcp_mount_new(reg, &opts, &mut out);
        let message = last_error();
        assert!(out.is_null(), "no mount on failure");
        capstan_registry_free(reg);
        (status, message)
    }
}

#[cfg(not(feature = "mcp-https"))]
#[test]
fn an_https_url_is_unsupported_without_the_feature_and_says_which() {
    let port = closed_port();
    for url in [
        format!("https://127.0.0.1:{port}/mcp"),
        format!("HTTPS://127.0.0.1:{port}/mcp"),
    ] {
        let (status, message) = mount(&url);
        assert_eq!(status, CAPSTAN_ERR_UNSUPPORTED, "{url}: {message}");
        assert!(message.contains("mcp-https"), "{message}");
        assert!(message.contains(&url), "{message}");
    }
    // Plain http:// is in the default build: it gets as far as connecting.
    let (status, message) = mount(&format!("http://127.0.0.1:{port}/mcp"));
    assert_eq!(status, CAPSTAN_ERR_MCP_CONNECT, "{message}");
}

#[cfg(feature = "mcp-https")]
#[test]
fn an_https_url_gets_as_far_as_connecting_with_the_feature() {
    let url = format!("https://127.0.0.1:{}/mcp", closed_port());
    let (status, message) = mount(&url);
    assert_eq!(status, CAPSTAN_ERR_MCP_CONNECT, "{message}");
    assert!(!message.contains("mcp-https"), "{message}");
}
