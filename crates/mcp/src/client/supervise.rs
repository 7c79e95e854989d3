//! Keeping a mount's tools in step with its server (`tools/list`, list
//! changes) and its connection alive: serve, notice the end, reconnect as
//! the host's policy allows.

use super::*;

/// Lists the server's tools and makes the registry match: registers new
/// and changed ones, unregisters the ones that went away.
pub(super) async fn sync_tools(
    session: &Arc<Session>,
    peer: &Peer<RoleClient>,
    limit: Duration,
) -> Result<(), String> {
    session.listed.take();
    let tools = tokio::time::timeout(limit, list_tools(peer))
        .await
        .map_err(|_| "tools/list did not answer in time".to_string())??;
    let listed = session.listed.take();
    // Unmount takes this lock after setting `shutdown`: once it has, no
    // tool of this mount is registered again.
    let _registering = session
        .registering
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if session.is_shut_down() {
        return Err("the server was unmounted".into());
    }
    let mut problems = Vec::new();
    let mut warnings = Vec::new();
    let mut mounted = BTreeMap::new();
    let ours = session.state().tools.clone();
    for tool in tools {
        let remote = tool.name;
        let local = format!("{}{remote}", session.options.prefix);
        let mut problem = |why: String| {
            problems.push(json!({"remote": remote, "local": local, "problem": why}));
        };
        if let Some(why) = tool.problem {
            problem(why);
            continue;
        }
        if let Err(e) = check_name(&local) {
            problem(e.to_string());
            continue;
        }
        if mounted.contains_key(&local) {
            problem("two remote tools have this name".into());
            continue;
        }
        if !ours.contains_key(&local) && session.registry.get(&local).is_some() {
            problem("a tool of this name is already registered in the registry".into());
            continue;
        }
        let def = ToolDef {
            name: local.clone(),
            description: tool.description,
            parameters: tool.parameters,
            handler: Box::new(RemoteTool {
                session: Arc::downgrade(session),
                remote: remote.clone(),
            }),
            timeout_ms: session.options.call_timeout_ms,
            max_output_chars: 0,
            // A re-listing replaces the tools this mount registered before
            // (and only those: another tool of the name was refused above,
            // and one registered since then makes the registration fail).
            flags: ToolFlags(if ours.contains_key(&local) {
                ToolFlags::REPLACE
            } else {
                0
            }),
        };
        // What the server says of its tool, kept as untrusted hints.
        match session.registry.register_with_mcp(def, tool.mcp) {
            Ok(()) => {
                if let Some(warning) = tool.warning {
                    warnings.push(json!({"remote": remote, "local": local, "warning": warning}));
                }
                mounted.insert(local, remote);
            }
            Err(e) => problem(e.to_string()),
        }
    }
    // Tools the server listed that rmcp's HTTP transport dropped (invalid
    // x-mcp-header annotations): not mounted, and said so.
    for (remote, why) in listed {
        if mounted.values().any(|r| *r == remote)
            || problems.iter().any(|p| p["remote"] == remote.as_str())
        {
            continue;
        }
        let why = why.unwrap_or_else(|| "its x-mcp-header annotations are invalid".into());
        problems.push(json!({
            "remote": remote,
            "local": format!("{}{remote}", session.options.prefix),
            "problem": format!("{why}: rmcp's HTTP client drops such a tool (a client must not call it)"),
        }));
    }
    for local in ours.keys() {
        if !mounted.contains_key(local) {
            let _ = session.registry.unregister(local);
        }
    }
    let mut state = session.state();
    state.tools = mounted;
    state.problems = problems;
    state.warnings = warnings;
    Ok(())
}

/// Lists the server's tools page by page, bounded (`bounds::Listing`: pages,
/// tools, bytes, a cursor that loops).
pub(super) async fn list_tools(
    peer: &Peer<RoleClient>,
) -> Result<Vec<crate::bounds::Listed>, String> {
    let mut listing = crate::bounds::Listing::default();
    let mut cursor = None;
    loop {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        let page = peer
            .list_tools(Some(params))
            .await
            .map_err(|e| format!("tools/list failed: {e}"))?;
        match crate::bounds::list_page(&mut listing, page)? {
            Some(next) => cursor = Some(next),
            None => return Ok(listing.tools),
        }
    }
}

pub(super) async fn until_shutdown(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|v| *v).await;
}

pub(super) enum Ended {
    Shutdown,
    Closed(String),
}

/// The shortest time between two re-listings on `list_changed`.
pub(super) const RESYNC_INTERVAL: Duration = Duration::from_millis(500);

/// Runs one connection until it ends or the mount shuts down. Every wait
/// in it (the listen subscription, a re-listing) gives way to unmount.
pub(super) async fn serve_connection(session: &Arc<Session>, connection: Connection) -> Ended {
    let Connection { running, child } = connection;
    let token = running.cancellation_token();
    let mut shutdown = session.shutdown.subscribe();
    let waiting = running.waiting();
    tokio::pin!(waiting);
    let (peer, generation) = {
        let state = session.state();
        (state.peer.clone(), state.generation)
    };
    // Since protocol 2026-07-28 a server sends list_changed only on a
    // `subscriptions/listen` stream; older servers send it unasked (to
    // `Listener`) and refuse the request, which is fine. Asked for within
    // the loop: a server that never answers does not hold it.
    let subscribe = async {
        let peer = peer.as_ref()?;
        let filter = SubscriptionFilter::builder().tools_list_changed().build();
        tokio::time::timeout(session.options.connect_timeout, peer.listen(filter))
            .await
            .ok()?
            .ok()
    };
    tokio::pin!(subscribe);
    let mut subscribing = true;
    let mut listen: Option<rmcp::service::Subscription> = None;
    let mut service_ended = false;
    let mut last_sync: Option<tokio::time::Instant> = None;
    let ended = 'serve: loop {
        tokio::select! {
            subscription = &mut subscribe, if subscribing => {
                subscribing = false;
                listen = subscription;
                if listen.is_some() {
                    // A change between the listing and the stream's
                    // acknowledgment was announced to nobody: list again.
                    session.resync.notify_one();
                }
            }
            heard = async {
                match listen.as_mut() {
                    Some(subscription) => subscription.next().await,
                    None => std::future::pending().await,
                }
            } => {
                match heard {
                    Ok(Some(_)) => session.resync.notify_one(),
                    _ => listen = None,
                }
            }
            _ = until_shutdown(&mut shutdown) => break Ended::Shutdown,
            reason = &mut waiting => {
                service_ended = true;
                break Ended::Closed(match reason {
                    Ok(r) => format!("the connection ended ({r:?})"),
                    Err(e) => format!("the connection task failed: {e}"),
                });
            }
            _ = session.broke.notified() => {
                let broken = {
                    let mut state = session.state();
                    state.broken.take().filter(|_| state.generation == generation)
                };
                if let Some(why) = broken {
                    break Ended::Closed(why);
                }
            }
            _ = session.resync.notified() => {
                if let Some(peer) = &peer {
                    // At most one re-listing per RESYNC_INTERVAL: the
                    // notifications heard meanwhile make one more, not many.
                    let not_before = last_sync.map(|t| t + RESYNC_INTERVAL);
                    let relist = async {
                        if let Some(t) = not_before {
                            tokio::time::sleep_until(t).await;
                        }
                        sync_tools(session, peer, session.options.connect_timeout).await
                    };
                    tokio::select! {
                        synced = relist => {
                            last_sync = Some(tokio::time::Instant::now());
                            if let Err(e) = synced {
                                session.state().last_error = format!("re-listing the tools failed: {e}");
                            }
                        }
                        _ = until_shutdown(&mut shutdown) => break 'serve Ended::Shutdown,
                    }
                }
            }
        }
    };
    // Bounded: the service gets 2 s to end (it ended already if `waiting`
    // resolved), the child 0.5 s before it is killed.
    if !service_ended {
        token.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(2), &mut waiting).await;
    }
    {
        let mut state = session.state();
        state.connected = false;
        state.peer = None;
        if let Ended::Closed(why) = &ended {
            state.last_error = why.clone();
        }
    }
    if let Some(child) = child {
        reap(child).await;
    }
    ended
}

pub(super) async fn supervise(
    session: Arc<Session>,
    first: std::sync::mpsc::Sender<Result<(), String>>,
) {
    let mut first = Some(first);
    let mut attempts: u32 = 0;
    let mut shutdown = session.shutdown.subscribe();
    loop {
        if session.is_shut_down() {
            break;
        }
        // One attempt, connecting and listing, is bounded by connect_timeout
        // as a whole (each step was bounded on its own: an attempt could take
        // twice as long, and a reconnect policy seemed not to act).
        let began = tokio::time::Instant::now();
        // Unmount does not wait for an attempt: dropped, it kills the
        // child it started (kill_on_drop) and ends its service.
        let result = tokio::select! {
            result = connect(&session) => result,
            _ = until_shutdown(&mut shutdown) => break,
        };
        let result = match result {
            Ok(connection) => {
                let peer = connection.running.peer().clone();
                // rmcp keeps up to 512 answers a server marks cacheable
                // (`ttlMs`), pages of tools/list among them, 16 MiB each: a
                // mount lists on connecting and on list_changed only, and
                // keeps nothing it did not bound.
                peer.set_response_cache_config(rmcp::service::ClientCacheConfig::disabled())
                    .await;
                let left = session
                    .options
                    .connect_timeout
                    .saturating_sub(began.elapsed());
                let synced = tokio::select! {
                    synced = sync_tools(&session, &peer, left) => synced,
                    _ = until_shutdown(&mut shutdown) => Err("unmounted".into()),
                };
                match synced {
                    Ok(()) => Ok((connection, peer)),
                    Err(e) => {
                        let mut connection = connection;
                        let _ = connection
                            .running
                            .close_with_timeout(Duration::from_secs(2))
                            .await;
                        if let Some(child) = connection.child {
                            reap(child).await;
                        }
                        Err(e)
                    }
                }
            }
            Err(e) => Err(e),
        };
        match result {
            Ok((connection, peer)) => {
                {
                    let mut state = session.state();
                    state.protocol = crate::era::negotiated(&peer);
                    state.peer = Some(peer);
                    state.connected = true;
                    state.generation += 1;
                    state.broken = None;
                    if first.is_none() {
                        state.reconnects += 1;
                    }
                    state.last_error.clear();
                }
                attempts = 0;
                if let Some(tx) = first.take() {
                    let _ = tx.send(Ok(()));
                }
                if let Ended::Shutdown = serve_connection(&session, connection).await {
                    break;
                }
            }
            Err(e) => {
                if let Some(tx) = first.take() {
                    let _ = tx.send(Err(e));
                    return;
                }
                session.state().last_error = e;
            }
        }
        if attempts >= session.options.max_reconnects {
            session.state().gave_up = true;
            break;
        }
        let wait = session.options.reconnect_backoff * (1u32 << attempts.min(6));
        attempts += 1;
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = until_shutdown(&mut shutdown) => break,
        }
    }
}
