//! Connecting to a server (a child process over stdio, or streamable HTTP,
//! with OAuth when the host supplies it) and hearing its notifications.

use super::*;

/// How often a response stream that broke before its answer is resumed
/// (`GET` with `Last-Event-ID`): three times, 0.25, 0.5 and 1 s apart. Not
/// forever, as rmcp would by default: a server that went away must end the
/// calls waiting on it (then the connection, and the reconnect policy) rather
/// than leave them hanging with the mount still "connected".
#[derive(Debug)]
pub(super) struct ResumeBriefly;

impl SseRetryPolicy for ResumeBriefly {
    fn retry(&self, attempts: usize) -> Option<Duration> {
        (attempts < 3).then(|| Duration::from_millis(250 << attempts))
    }
}

/// Hears the server's notifications, and has the host answer its requests.
pub(super) struct Listener {
    session: Weak<Session>,
    protocol_version: Option<String>,
    input: Option<HostInput>,
}

impl Listener {
    /// The host's answer to a request an older server made mid-call,
    /// bounded by `ANSWER_WAIT`; an error (no answerer for the method, a
    /// bad answer, no answer in time) goes back to the server as one.
    async fn ask_host<T: serde::de::DeserializeOwned>(
        &self,
        method: &'static str,
        params: Value,
    ) -> Result<T, rmcp::ErrorData> {
        let Some(host) = &self.input else {
            return Err(rmcp::ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("this client does not answer {method}"),
                None,
            ));
        };
        let answer = tokio::time::timeout(answer::ANSWER_WAIT, host.ask(None, method, params))
            .await
            .unwrap_or_else(|_| Err(format!("the host gave no answer to {method} in time")))
            .map_err(|why| rmcp::ErrorData::internal_error(why, None))?;
        serde_json::from_value(answer)
            .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))
    }
}

impl ClientHandler for Listener {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        if let Ok(me) =
            serde_json::from_value(json!({"name": "capstan", "version": env!("CARGO_PKG_VERSION")}))
        {
            info.client_info = me;
        }
        if let Some(version) = &self.protocol_version {
            if let Ok(version) = serde_json::from_value(json!(version)) {
                info.protocol_version = version;
            }
        }
        if let Some(host) = &self.input {
            let c = &mut info.capabilities;
            for capability in host.capabilities() {
                match capability {
                    "elicitation" => c.elicitation = serde_json::from_value(json!({})).ok(),
                    "sampling" => c.sampling = serde_json::from_value(json!({})).ok(),
                    _ => c.roots = serde_json::from_value(json!({})).ok(),
                }
            }
        }
        // A server may answer with a task: capstan drives it (`remote_tasks`).
        info.capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(
                rmcp::model::TASKS_EXTENSION_ID.to_owned(),
                Default::default(),
            );
        info
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        if let Some(session) = self.session.upgrade() {
            session.resync.notify_one();
        }
        std::future::ready(())
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let params = serde_json::to_value(request).unwrap_or_default();
        self.ask_host("elicitation/create", params).await
    }

    // Sampling and roots are deprecated by 2026-07-28 (SEP-2577), and
    // servers of the older versions still ask them.
    #[allow(deprecated)]
    async fn create_message(
        &self,
        request: rmcp::model::CreateMessageRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        let params = serde_json::to_value(request).unwrap_or_default();
        self.ask_host("sampling/createMessage", params).await
    }

    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        match &self.input {
            Some(host) if host.answers("roots/list") => {
                self.ask_host("roots/list", json!({})).await
            }
            // No roots to offer (rmcp's own answer).
            _ => Ok(rmcp::model::ListRootsResult::default()),
        }
    }
}

/// One live connection: the service and, for stdio, the child process.
pub(super) struct Connection {
    pub(super) running: RunningService<RoleClient, Listener>,
    pub(super) child: Option<tokio::process::Child>,
}

pub(super) async fn connect(session: &Arc<Session>) -> Result<Connection, String> {
    let listener = Listener {
        session: Arc::downgrade(session),
        protocol_version: session.options.protocol_version.clone(),
        input: session.options.input.clone(),
    };
    let timeout = session.options.connect_timeout;
    let lifecycle = crate::era::lifecycle(session.options.protocol_version.as_deref());
    match &session.options.endpoint {
        Endpoint::Command { argv, env, cwd } => {
            let Some(program) = argv.first() else {
                return Err("the command line is empty".into());
            };
            let mut command = tokio::process::Command::new(program);
            command
                .args(&argv[1..])
                .envs(env.iter().map(|(k, v)| (k, v)))
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::inherit())
                .kill_on_drop(true);
            if let Some(dir) = cwd {
                command.current_dir(dir);
            }
            let mut child = command
                .spawn()
                .map_err(|e| format!("could not start {program:?}: {e}"))?;
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                return Err("the child process has no stdin/stdout pipes".into());
            };
            match tokio::time::timeout(
                timeout,
                listener.serve_with_lifecycle(
                    crate::progress::Tap::new(
                        // Answers owed to the server bounded as over HTTP:
                        // the wire bounds only those waiting to be written.
                        crate::owed::Owed::new(crate::wire::StdioWire::new(
                            stdout,
                            stdin,
                            session.result_bytes(),
                        )),
                        &session.progress,
                    ),
                    lifecycle,
                ),
            )
            .await
            {
                Ok(Ok(running)) => Ok(Connection {
                    running,
                    child: Some(child),
                }),
                Ok(Err(e)) => {
                    reap(child).await;
                    Err(format!("MCP initialization with {program:?} failed: {e}"))
                }
                Err(_) => {
                    reap(child).await;
                    Err(format!(
                        "{program:?} did not complete MCP initialization within {} ms",
                        timeout.as_millis()
                    ))
                }
            }
        }
        Endpoint::Http { url, headers } => {
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.clone());
            for (name, value) in headers {
                let name = http::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|e| format!("invalid header name {name:?}: {e}"))?;
                let value = http::HeaderValue::from_str(value)
                    .map_err(|e| format!("invalid value of header {name}: {e}"))?;
                config.custom_headers.insert(name, value);
            }
            config.retry_config = Arc::new(ResumeBriefly);
            // reqwest's rustls has no provider of its own here (it would
            // panic): ring, unless the process installed one already.
            #[cfg(feature = "https")]
            let _ = rustls::crypto::ring::default_provider().install_default();
            let http =
                crate::wire::CheckedHttp::new(session.result_bytes(), session.listed.clone())?;
            let Some(oauth) = &session.options.oauth else {
                return serve_http(session, listener, lifecycle, http, config, url).await;
            };
            // The authorization runs inside the first request, so the
            // connect timeout bounds it as well (and `Authorization` again).
            let authorization = session
                .authorization
                .get_or_try_init(|| crate::oauth::Authorization::new(oauth.clone(), url, timeout))
                .await?;
            let http = authorization.client(http).await?;
            serve_http(session, listener, lifecycle, http, config, url).await
        }
    }
}

/// Serves one streamable-HTTP connection through `http`.
pub(super) async fn serve_http<C: rmcp::transport::streamable_http_client::StreamableHttpClient>(
    session: &Arc<Session>,
    listener: Listener,
    lifecycle: rmcp::ClientLifecycleMode,
    http: C,
    config: StreamableHttpClientTransportConfig,
    url: &str,
) -> Result<Connection, String> {
    let timeout = session.options.connect_timeout;
    let transport = StreamableHttpClientTransport::with_client(http, config);
    // Answers owed to the server bounded (its requests on the event
    // stream), as over stdio.
    let transport = crate::owed::Owed::new(transport);
    let transport = crate::progress::Tap::new(transport, &session.progress);
    match tokio::time::timeout(timeout, listener.serve_with_lifecycle(transport, lifecycle)).await {
        Ok(Ok(running)) => Ok(Connection {
            running,
            child: None,
        }),
        Ok(Err(e)) => Err(format!("MCP initialization with {url} failed: {e}")),
        Err(_) => Err(format!(
            "{url} did not complete MCP initialization within {} ms",
            timeout.as_millis()
        )),
    }
}

/// Ends a child process: it gets a moment to exit on its own (its stdin is
/// closed by now), then it is killed; waited for either way, so no zombie stays.
pub(super) async fn reap(mut child: tokio::process::Child) {
    if tokio::time::timeout(Duration::from_millis(500), child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_response_stream_is_resumed_three_times_a_quarter_half_and_one_second_apart() {
        let delays: Vec<Option<Duration>> = (0..5).map(|n| ResumeBriefly.retry(n)).collect();
        let ms = Duration::from_millis;
        assert_eq!(
            delays,
            [Some(ms(250)), Some(ms(500)), Some(ms(1000)), None, None]
        );
    }
}
