//! The host's callbacks of a mount (`capstan_mcp_mount_options`): its
//! answers to what a server asks (`input_*`) and its part of OAuth
//! (`oauth_*`), adapted to the core's traits, with the options' rules.

use std::sync::Arc;

use super::boundary::*;
use super::flags::{
    CAPSTAN_MCP_INPUT_ELICITATION, CAPSTAN_MCP_INPUT_ROOTS, CAPSTAN_MCP_INPUT_SAMPLING,
};
use super::mcp_client::*;
use crate::mcp::oauth::{IdentityProvider, OAuthOptions, TokenStore};

impl crate::mcp::client::AnswerInput for OwnedHostFn<capstan_mcp_input_fn> {
    fn answer(
        &self,
        tool: Option<&str>,
        method: &str,
        params: &serde_json::Value,
    ) -> Result<serde_json::Value, String> {
        let Some(answer) = self.f else {
            return Err("no input_answer callback".into());
        };
        let nul = |text: &str, what: &str| {
            std::ffi::CString::new(text).map_err(|_| format!("the {what} holds a NUL"))
        };
        let tool = tool.map(|t| nul(t, "tool name")).transpose()?;
        let method_c = nul(method, "method")?;
        let params_text = params.to_string();
        let params_len = params_text.len();
        let params_c = nul(&params_text, "params")?;
        let mut buf = vec![0u8; CAPSTAN_MCP_INPUT_ANSWER_MAX];
        // SAFETY: the host's callback, given NUL-terminated text that
        // outlives the call and room it may fill.
        let n = unsafe {
            answer(
                self.user_data,
                tool.as_ref().map_or(std::ptr::null(), |t| t.as_ptr()),
                method_c.as_ptr(),
                params_c.as_ptr(),
                params_len,
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        };
        match n {
            0 => Err(format!(
                "the host gave no answer to {method} (input_answer returned 0)"
            )),
            n if n > buf.len() => Err(format!(
                "input_answer returned {n} bytes for {method}, more than \
                 CAPSTAN_MCP_INPUT_ANSWER_MAX"
            )),
            n => serde_json::from_slice(&buf[..n])
                .map_err(|e| format!("the host's answer to {method} is not JSON: {e}")),
        }
    }
}

/// The host's input answerer, owned at once (so that `input_destroy`
/// runs once whatever fails), and its methods checked.
pub(super) unsafe fn input(
    o: &capstan_mcp_mount_options,
) -> Result<Option<crate::mcp::client::HostInput>, Fail> {
    let host = Arc::new(OwnedHostFn::new(
        o.input_answer,
        o.input_user_data,
        o.input_destroy,
    ));
    if o.input_answer.is_none() {
        if o.input_methods != 0 {
            return Err(Fail::BadArgument(
                "opts.input_methods is set without opts.input_answer".into(),
            ));
        }
        return Ok(None);
    }
    super::flags::check(o.input_methods, &super::flags::MCP_INPUT)?;
    if o.input_methods == 0 {
        return Err(Fail::BadArgument(
            "opts.input_methods is 0: name one or more of CAPSTAN_MCP_INPUT_ELICITATION, \
             CAPSTAN_MCP_INPUT_SAMPLING and CAPSTAN_MCP_INPUT_ROOTS"
                .into(),
        ));
    }
    let methods: Vec<&str> = [
        (CAPSTAN_MCP_INPUT_ELICITATION, "elicitation/create"),
        (CAPSTAN_MCP_INPUT_SAMPLING, "sampling/createMessage"),
        (CAPSTAN_MCP_INPUT_ROOTS, "roots/list"),
    ]
    .into_iter()
    .filter(|(bit, _)| o.input_methods & bit != 0)
    .map(|(_, method)| method)
    .collect();
    Ok(Some(crate::mcp::client::HostInput::new(&methods, host)?))
}

/// The host's OAuth callbacks, kept until the last holder lets go
/// (then `oauth_destroy` runs).
struct HostOAuth {
    authorize: capstan_mcp_authorize_fn,
    assertion: capstan_mcp_assertion_fn,
    load: capstan_mcp_tokens_load_fn,
    save: capstan_mcp_tokens_save_fn,
}

impl TokenStore for OwnedHostFn<HostOAuth> {
    fn load(&self) -> Option<String> {
        let load = self.f.load?;
        let mut buf = vec![0u8; CAPSTAN_MCP_TOKENS_MAX];
        // SAFETY: the host's callback, given room it may fill.
        let n = unsafe { load(self.user_data, buf.as_mut_ptr().cast(), buf.len()) };
        if n == 0 || n > buf.len() {
            return None;
        }
        buf.truncate(n);
        String::from_utf8(buf).ok()
    }

    fn save(&self, json: Option<&str>) {
        if let Some(save) = self.f.save {
            let (ptr, len) = json.map_or((std::ptr::null(), 0), |j| (j.as_ptr(), j.len()));
            // SAFETY: the host's callback; the text outlives the call.
            unsafe { save(self.user_data, ptr.cast(), len) }
        }
    }
}

fn authorize(host: &OwnedHostFn<HostOAuth>, url: &str) -> Result<String, String> {
    let Some(authorize) = host.f.authorize else {
        return Err("no authorize callback".into());
    };
    let url = std::ffi::CString::new(url).map_err(|_| "the URL holds a NUL".to_string())?;
    let mut buf = vec![0u8; CAPSTAN_MCP_REDIRECT_MAX];
    // SAFETY: the host's callback, given the URL and room it may fill.
    let n = unsafe {
        authorize(
            host.user_data,
            url.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    match n {
        0 => Err("the host's authorize callback refused it (returned 0)".into()),
        n if n > buf.len() => Err(format!(
            "the host's authorize callback returned {n} bytes, more than CAPSTAN_MCP_REDIRECT_MAX"
        )),
        n => {
            buf.truncate(n);
            String::from_utf8(buf)
                .map_err(|_| "the redirect URL from the authorize callback is not UTF-8".into())
        }
    }
}

fn assertion(host: &OwnedHostFn<HostOAuth>, audience: &str) -> Result<String, String> {
    let Some(assertion) = host.f.assertion else {
        return Err("no assertion callback".into());
    };
    let audience =
        std::ffi::CString::new(audience).map_err(|_| "the audience holds a NUL".to_string())?;
    let mut buf = vec![0u8; CAPSTAN_MCP_ASSERTION_MAX];
    // SAFETY: the host's callback, given the audience and room it may fill.
    let n = unsafe {
        assertion(
            host.user_data,
            audience.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    match n {
        0 => Err("the host's assertion callback returned 0".into()),
        n if n > buf.len() => Err(format!(
            "the host's assertion callback returned {n} bytes, more than \
             CAPSTAN_MCP_ASSERTION_MAX"
        )),
        n => {
            buf.truncate(n);
            String::from_utf8(buf)
                .map_err(|_| "the assertion from the host's callback is not UTF-8".into())
        }
    }
}

pub(super) unsafe fn oauth(
    o: &capstan_mcp_mount_options,
    http: bool,
) -> Result<Option<OAuthOptions>, Fail> {
    // Owned first, so that oauth_destroy runs once whatever fails below.
    let host = Arc::new(OwnedHostFn::new(
        HostOAuth {
            authorize: o.oauth_authorize,
            assertion: o.oauth_assertion,
            load: o.oauth_tokens_load,
            save: o.oauth_tokens_save,
        },
        o.oauth_user_data,
        o.oauth_destroy,
    ));
    let text = |ptr, name| -> Result<Option<String>, Fail> {
        Ok(c_text(ptr, name)?
            .filter(|s| !s.is_empty())
            .map(str::to_owned))
    };
    let redirect_uri = text(o.oauth_redirect_uri, "opts.oauth_redirect_uri")?;
    let client_id = text(o.oauth_client_id, "opts.oauth_client_id")?;
    let client_secret = text(o.oauth_client_secret, "opts.oauth_client_secret")?;
    let metadata_url = text(
        o.oauth_client_metadata_url,
        "opts.oauth_client_metadata_url",
    )?;
    let scopes = text(o.oauth_scopes, "opts.oauth_scopes")?;
    let client_key = text(o.oauth_client_key, "opts.oauth_client_key")?;
    let idp = [
        text(o.oauth_idp_issuer, "opts.oauth_idp_issuer")?,
        text(o.oauth_idp_token_endpoint, "opts.oauth_idp_token_endpoint")?,
        text(o.oauth_idp_client_id, "opts.oauth_idp_client_id")?,
    ];
    let idp_secret = text(o.oauth_idp_client_secret, "opts.oauth_idp_client_secret")?;
    let client_issuer = text(o.oauth_client_issuer, "opts.oauth_client_issuer")?;
    let identity_provider = match idp {
        [Some(issuer), Some(token_endpoint), Some(client_id)] => Some(IdentityProvider {
            issuer,
            token_endpoint,
            client_id,
            client_secret: idp_secret,
        }),
        [None, None, None] if idp_secret.is_none() => None,
        _ => {
            return Err(Fail::BadArgument(
                "opts.oauth_idp_issuer, opts.oauth_idp_token_endpoint and \
                 opts.oauth_idp_client_id go together: set all three or none"
                    .into(),
            ))
        }
    };
    if identity_provider.is_some() && o.oauth_assertion.is_none() {
        return Err(Fail::BadArgument(
            "opts.oauth_idp_* needs opts.oauth_assertion (the user's ID token there)".into(),
        ));
    }
    if client_secret.is_some() && client_id.is_none() {
        return Err(Fail::BadArgument(
            "opts.oauth_client_secret needs opts.oauth_client_id".into(),
        ));
    }
    if client_key.is_some() && client_id.is_none() {
        return Err(Fail::BadArgument(
            "opts.oauth_client_key needs opts.oauth_client_id".into(),
        ));
    }
    if client_issuer.is_some() && client_secret.is_none() && client_key.is_none() {
        return Err(Fail::BadArgument(
            "opts.oauth_client_issuer pins where opts.oauth_client_secret or \
             opts.oauth_client_key go: set one of them"
                .into(),
        ));
    }
    if let Some(pem) = &client_key {
        crate::mcp::oauth::check_client_key(pem)
            .map_err(|e| Fail::BadArgument(format!("opts.oauth_client_key: {e}")))?;
    }
    let stored = o.oauth_tokens_load.is_some() || o.oauth_tokens_save.is_some();
    // No user to ask: the client-credentials grant (a client id with its
    // secret or key), or a grant from the host's assertion.
    let machine = (client_id.is_some() && (client_secret.is_some() || client_key.is_some()))
        || o.oauth_assertion.is_some();
    if o.oauth_authorize.is_none() && !stored && !machine {
        if redirect_uri.is_some()
            || client_id.is_some()
            || client_secret.is_some()
            || client_key.is_some()
        {
            return Err(Fail::BadArgument(
                "opts.oauth_* is set without opts.oauth_authorize, a token store, a client \
                 id and secret or key (for the client-credentials grant), or \
                 opts.oauth_assertion"
                    .into(),
            ));
        }
        return Ok(None);
    }
    if !http {
        return Err(Fail::BadArgument(
            "OAuth (opts.oauth_*) is for a url, not a command line".into(),
        ));
    }
    if o.oauth_authorize.is_some() && redirect_uri.is_none() {
        return Err(Fail::BadArgument(
            "opts.oauth_authorize needs opts.oauth_redirect_uri".into(),
        ));
    }
    let mut options = OAuthOptions::new(redirect_uri.unwrap_or_default());
    options.client_id = client_id;
    options.client_secret = client_secret;
    options.client_key = client_key;
    options.client_issuer = client_issuer;
    options.identity_provider = identity_provider;
    options.client_metadata_url = metadata_url;
    options.scopes = scopes
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    if o.oauth_authorize.is_some() {
        let host = host.clone();
        options.authorize = Some(Arc::new(move |url: &str| authorize(&host, url)));
    }
    if o.oauth_assertion.is_some() {
        let host = host.clone();
        options.assertion = Some(Arc::new(move |audience: &str| assertion(&host, audience)));
    }
    if stored {
        options.store = Some(host);
    }
    Ok(Some(options))
}
