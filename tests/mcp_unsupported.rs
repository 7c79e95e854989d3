//! Built without feature `mcp` (`cargo test --no-default-features --test
//! mcp_unsupported`): the MCP functions are still there and say UNSUPPORTED.
#![cfg(not(feature = "mcp"))]

use std::ptr;

use capstan::ffi::*;

fn last_error() -> String {
    let mut buf = [0u8; 256];
    let n = unsafe { capstan_error_message(buf.as_mut_ptr().cast(), buf.len()) };
    String::from_utf8_lossy(&buf[..n.min(buf.len() - 1)]).into_owned()
}

#[test]
fn mcp_server_functions_say_unsupported_without_the_feature() {
    let mut reg = ptr::null_mut();
    unsafe {
        assert_eq!(capstan_registry_new(ptr::null(), &mut reg), CAPSTAN_OK);
        let mut server = ptr::null_mut();
        assert_eq!(
            capstan_mcp_server_start(reg, ptr::null(), &mut server),
            CAPSTAN_ERR_UNSUPPORTED
        );
        assert!(server.is_null());
        assert!(
            last_error().contains("without feature `mcp`"),
            "{}",
            last_error()
        );
        assert_eq!(
            capstan_mcp_server_serve_stdio(reg, ptr::null()),
            CAPSTAN_ERR_UNSUPPORTED
        );
        capstan_registry_free(reg);
    }
}

#[test]
fn the_feature_mask_says_there_is_no_mcp() {
    let mask = capstan_features_mask();
    assert_eq!(
        mask & (CAPSTAN_FEATURE_MCP_SERVER | CAPSTAN_FEATURE_MCP_MOUNT | CAPSTAN_FEATURE_MCP_HTTP),
        0,
        "{mask:#x}"
    );
    assert_ne!(mask & CAPSTAN_FEATURE_STREAM, 0, "{mask:#x}");
}
