//! The router, the shared state, the access check and the handlers.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use eval::{NetSource, PlayerSpec, Timeouts};
use serde::Deserialize;
use tokio::sync::Semaphore;

use crate::assets;
use crate::config::{ServeConfig, ServeError, TOKEN_HEADER, is_loopback_host};
use crate::error::ApiError;
use crate::games::{self, GameDetail, GameListing, ShardCache};
use crate::matches;
use crate::position::{PositionView, move_cells, parse_game, parse_legal_move, parse_state, view};
use crate::runs::{self, RunEntry, Runs};

/// Longest thinking time a player may be given from this server.
const MAX_THINK: std::time::Duration = std::time::Duration::from_secs(30);
/// Most simulations a player may be given from this server.
const MAX_SIMS: u32 = 20_000;

/// What every handler shares.
pub struct AppState {
    runs: Runs,
    searches: Arc<Semaphore>,
    config: ServeConfig,
    shards: ShardCache,
}

impl AppState {
    /// Checks the runs and sets up the search slots.
    pub fn new(config: ServeConfig) -> Result<AppState, ServeError> {
        let runs = Runs::new(&config.runs).map_err(ServeError::NotARun)?;
        Ok(AppState {
            runs,
            searches: Arc::new(Semaphore::new(config.max_searches.max(1))),
            config,
            shards: ShardCache::default(),
        })
    }
}

type Shared = State<Arc<AppState>>;

/// Every route.
pub fn routes(state: Arc<AppState>) -> Router {
    let api = Router::new()
        .route("/games", get(game_names))
        .route("/runs", get(list_runs))
        .route("/runs/{run}", get(run_dashboard))
        .route("/runs/{run}/config", get(run_config))
        .route("/runs/{run}/games", get(run_games))
        .route("/runs/{run}/games/{generation}/{game}", get(run_game))
        .route(
            "/runs/{run}/matches/{generation}/{source}/{game}",
            get(match_game),
        )
        .route("/position", get(position))
        .route("/move", get(play_move))
        .route("/think", post(think))
        .route("/analyse", post(analyse))
        .route("/search", post(search_position))
        .fallback(|| async { ApiError::NotFound("no such API endpoint".into()) })
        .layer(middleware::from_fn_with_state(state.clone(), check_token))
        .layer(middleware::from_fn_with_state(state.clone(), hide_paths));
    Router::new()
        .nest("/api", api)
        .route("/", get(|| async { asset("index.html") }))
        .route(
            "/assets/{file}",
            get(|Path(f): Path<String>| async move { asset(&f) }),
        )
        .fallback(|| async { ApiError::NotFound("no such page".into()) })
        .layer(middleware::from_fn_with_state(state.clone(), check_host))
        .with_state(state)
}

/// Most characters of a refused Host header repeated in the message.
const HOST_SHOWN: usize = 80;

/// Refuses every request not addressed to a loopback name, when the server has no
/// token (see [`crate::is_loopback_host`]): 403, naming the host. A server with a token
/// answers any Host: it may be reached by any name, and the token, which another site's
/// page does not have, is what keeps others out.
async fn check_host(State(s): Shared, req: Request, next: Next) -> Response {
    if s.config.token.is_none() {
        let hosts: Vec<String> = req
            .headers()
            .get_all(header::HOST)
            .iter()
            .map(|v| v.to_str().unwrap_or("(not text)").to_string())
            .chain(req.uri().authority().map(|a| a.as_str().to_string()))
            .collect();
        let bad = if hosts.is_empty() {
            Some("no Host header".to_string())
        } else {
            hosts.iter().find(|h| !is_loopback_host(h)).map(|h| {
                let shown: String = h.chars().take(HOST_SHOWN).collect();
                format!("Host `{shown}` is not a loopback name")
            })
        };
        if let Some(why) = bad {
            return ApiError::Forbidden(format!(
                "{why}: this server has no token, so it answers only requests addressed to \
                 localhost, 127.0.0.1 or [::1] (another site's page could otherwise reach it \
                 by DNS rebinding); open it by one of those names, or start it with --token"
            ))
            .into_response();
        }
    }
    next.run(req).await
}

/// Largest error body rewritten by [`hide_paths`] (errors are a line or two).
const ERROR_BODY_LIMIT: usize = 1 << 20;

/// Every error answer of the API with the run directories' paths taken out (a path
/// inside a run is named relative to it): a message never shows where the server keeps
/// its files, whichever layer wrote it.
async fn hide_paths(State(s): Shared, req: Request, next: Next) -> Response {
    let res = next.run(req).await;
    if res.status().is_success() {
        return res;
    }
    let (mut parts, body) = res.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, ERROR_BODY_LIMIT).await else {
        return ApiError::Internal("the error message could not be read".into()).into_response();
    };
    let text = String::from_utf8_lossy(&bytes);
    let hidden = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(mut v) => {
            hide_in_json(&mut v, &s.runs);
            v.to_string()
        }
        Err(_) => s.runs.hide_paths(&text),
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, axum::body::Body::from(hidden))
}

fn hide_in_json(v: &mut serde_json::Value, runs: &Runs) {
    match v {
        serde_json::Value::String(t) => *t = runs.hide_paths(t),
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| hide_in_json(x, runs)),
        serde_json::Value::Object(o) => o.values_mut().for_each(|x| hide_in_json(x, runs)),
        _ => {}
    }
}

fn asset(name: &str) -> Response {
    match assets::get(name) {
        Some((body, mime)) => (
            [
                (header::CONTENT_TYPE, HeaderValue::from_static(mime)),
                (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            ],
            body,
        )
            .into_response(),
        None => ApiError::NotFound(format!("no asset `{name}`")).into_response(),
    }
}

/// Refuses `/api/` requests without the token, when the server has one.
async fn check_token(State(s): Shared, req: Request, next: Next) -> Response {
    if let Some(token) = &s.config.token {
        let header = req
            .headers()
            .get(TOKEN_HEADER)
            .and_then(|v| v.to_str().ok());
        let query = req
            .uri()
            .query()
            .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("token=")));
        let given = header.or(query).unwrap_or("");
        if !constant_time_eq(given.as_bytes(), token.as_bytes()) {
            return ApiError::Unauthorized.into_response();
        }
    }
    next.run(req).await
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A query string that did not parse: 400 with the reason.
fn bad_query(e: QueryRejection) -> ApiError {
    ApiError::BadRequest(format!("bad query: {}", e.body_text()))
}

fn bad_json(e: JsonRejection) -> ApiError {
    ApiError::BadRequest(format!("bad request body: {}", e.body_text()))
}

async fn game_names() -> Json<Vec<&'static str>> {
    Json(engine::GAME_NAMES.to_vec())
}

async fn list_runs(State(s): Shared, headers: axum::http::HeaderMap) -> Result<Response, ApiError> {
    let list: Vec<RunEntry> = blocking(move || Ok(s.runs.list())).await?;
    Ok(json_unless_unchanged(&list, &headers))
}

#[derive(Deserialize)]
struct DashboardQuery {
    /// Only the generations from this one on (a page that has the earlier ones).
    #[serde(default)]
    from: u32,
}

async fn run_dashboard(
    State(s): Shared,
    Path(run): Path<String>,
    q: Result<Query<DashboardQuery>, QueryRejection>,
    headers: axum::http::HeaderMap,
) -> Result<Response, ApiError> {
    let Query(q) = q.map_err(bad_query)?;
    let d = blocking(move || {
        let dir = s.runs.dir(&run)?;
        let mut d = runs::dashboard(&run, dir, q.from)?;
        // Log lines and the lock name paths (`run /srv/runs/a: …`): never shown.
        let st = &mut d.status;
        for t in [&mut st.last_line, &mut st.holder].into_iter().flatten() {
            *t = s.runs.hide_paths(t);
        }
        Ok(d)
    })
    .await?;
    Ok(json_unless_unchanged(&d, &headers))
}

/// The run's effective config as the pipeline saved it.
#[derive(serde::Serialize)]
struct RunConfigText {
    id: String,
    text: String,
}

async fn run_config(
    State(s): Shared,
    Path(run): Path<String>,
    headers: axum::http::HeaderMap,
) -> Result<Response, ApiError> {
    let c = blocking(move || {
        let dir = s.runs.dir(&run)?;
        let path = rundir::RunDir::new(dir).config();
        let text = rundir::read_own_text(&path, rundir::Limit::CONFIG).map_err(|e| {
            ApiError::NotFound(format!("run `{run}` has no readable config.toml: {e}"))
        })?;
        Ok(RunConfigText {
            text: s.runs.hide_paths(&text),
            id: run,
        })
    })
    .await?;
    Ok(json_unless_unchanged(&c, &headers))
}

/// `value` as JSON with an `ETag` (a hash of the body), or `304 Not Modified` with no
/// body when the request's `If-None-Match` names that tag: a page polling a run that
/// has not changed receives headers only.
fn json_unless_unchanged<T: serde::Serialize>(
    value: &T,
    headers: &axum::http::HeaderMap,
) -> Response {
    let body = match serde_json::to_vec(value) {
        Ok(b) => b,
        Err(e) => {
            return ApiError::Internal(format!("cannot write the answer: {e}")).into_response();
        }
    };
    // FNV-1a: stable across builds, and a collision only costs one missed update.
    let hash = engine::fnv1a(&body);
    let tag = format!("\"{hash:016x}-{}\"", body.len());
    let unchanged = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        // If-None-Match compares weakly: a proxy that compresses marks the tag W/.
        .map(|t| t.trim().trim_start_matches("W/"))
        .any(|t| t == tag || t == "*");
    let etag = HeaderValue::from_str(&tag).expect("hex digits and quotes");
    let no_cache = HeaderValue::from_static("no-cache");
    if unchanged {
        return (
            axum::http::StatusCode::NOT_MODIFIED,
            [(header::ETAG, etag), (header::CACHE_CONTROL, no_cache)],
        )
            .into_response();
    }
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (header::ETAG, etag),
            (header::CACHE_CONTROL, no_cache),
        ],
        body,
    )
        .into_response()
}

#[derive(Deserialize)]
struct GamesQuery {
    generation: Option<u32>,
    result: Option<String>,
    source: Option<String>,
}

async fn run_games(
    State(s): Shared,
    Path(run): Path<String>,
    q: Result<Query<GamesQuery>, QueryRejection>,
) -> Result<Json<Vec<GameListing>>, ApiError> {
    let Query(q) = q.map_err(bad_query)?;
    if let Some(r) = &q.result
        && !["1-0", "0-1", "1/2-1/2"].contains(&r.as_str())
    {
        return Err(ApiError::BadRequest(format!(
            "result `{r}`: expected 1-0, 0-1 or 1/2-1/2"
        )));
    }
    if let Some(src) = &q.source
        && !["selfplay", "gate", "anchor"].contains(&src.as_str())
    {
        return Err(ApiError::BadRequest(format!(
            "source `{src}`: expected selfplay, gate or anchor"
        )));
    }
    blocking(move || {
        let dir = s.runs.dir(&run)?.to_path_buf();
        let (gens, _problems) = runs::read_generations(&dir);
        let mut out = vec![];
        for g in gens
            .iter()
            .filter(|g| q.generation.is_none_or(|n| n == g.generation))
        {
            let want = |src: &str| q.source.as_deref().is_none_or(|s| s == src);
            if want("selfplay") && g.selfplay.is_some() {
                for (id, rows) in s.shards.games(&dir, g.generation)? {
                    out.extend(games::listing(g.generation, id, &rows));
                }
            }
            if let Some(e) = g.eval.as_ref().filter(|_| want("gate") || want("anchor")) {
                out.extend(
                    matches::match_listings(&dir, e)?
                        .into_iter()
                        .filter(|l| want(l.source)),
                );
            }
        }
        if let Some(r) = &q.result {
            out.retain(|l| &l.result == r);
        }
        Ok(out)
    })
    .await
    .map(Json)
}

fn parse_ids(generation: &str, game: &str) -> Result<(u32, u64), ApiError> {
    let g: u32 = generation
        .strip_prefix("gen-")
        .unwrap_or(generation)
        .parse()
        .map_err(|_| {
            ApiError::BadRequest(format!("generation `{generation}`: expected a number"))
        })?;
    let id: u64 = game
        .parse()
        .map_err(|_| ApiError::BadRequest(format!("game `{game}`: expected a number")))?;
    Ok((g, id))
}

async fn match_game(
    State(s): Shared,
    Path((run, generation, source, game)): Path<(String, String, String, String)>,
) -> Result<Json<GameDetail>, ApiError> {
    let (generation, id) = parse_ids(&generation, &game)?;
    if source != "gate" && source != "anchor" {
        return Err(ApiError::BadRequest(format!(
            "match `{source}`: expected gate or anchor"
        )));
    }
    blocking(move || {
        let dir = s.runs.dir(&run)?.to_path_buf();
        let missing = || {
            ApiError::NotFound(format!(
                "no {source} game {id} in generation {generation} of run `{run}`"
            ))
        };
        let games = matches::match_games(&dir, generation, &source)?.ok_or_else(missing)?;
        let g = usize::try_from(id)
            .ok()
            .and_then(|i| games.get(i))
            .ok_or_else(missing)?;
        matches::detail(generation, id, g)
    })
    .await
    .map(Json)
}

async fn run_game(
    State(s): Shared,
    Path((run, generation, game)): Path<(String, String, String)>,
) -> Result<Json<GameDetail>, ApiError> {
    let (generation, id) = parse_ids(&generation, &game)?;
    blocking(move || {
        let dir = s.runs.dir(&run)?.to_path_buf();
        let all = s.shards.games(&dir, generation)?;
        let rows = all.get(&id).ok_or_else(|| {
            ApiError::NotFound(format!(
                "no self-play game {id} in generation {generation} of run `{run}`"
            ))
        })?;
        games::detail(generation, id, rows)
    })
    .await
    .map(Json)
}

#[derive(Deserialize)]
struct PositionQuery {
    game: String,
    position: Option<String>,
}

async fn position(
    q: Result<Query<PositionQuery>, QueryRejection>,
) -> Result<Json<PositionView>, ApiError> {
    let Query(q) = q.map_err(bad_query)?;
    let game = parse_game(&q.game)?;
    let state = parse_state(game, q.position.as_deref())?;
    Ok(Json(view(&state)))
}

#[derive(Deserialize)]
struct MoveQuery {
    game: String,
    position: Option<String>,
    #[serde(rename = "move")]
    mv: String,
}

async fn play_move(
    q: Result<Query<MoveQuery>, QueryRejection>,
) -> Result<Json<PositionView>, ApiError> {
    let Query(q) = q.map_err(bad_query)?;
    let game = parse_game(&q.game)?;
    let state = parse_state(game, q.position.as_deref())?;
    let mv = parse_legal_move(&state, &q.mv)?;
    Ok(Json(view(&state.after(mv))))
}

#[derive(Deserialize)]
struct ThinkBody {
    game: String,
    position: Option<String>,
    player: String,
    #[serde(default)]
    seed: u64,
}

/// A player's answer: its move, and the position after it.
#[derive(serde::Serialize)]
struct ThinkAnswer {
    player: String,
    #[serde(rename = "move")]
    mv: String,
    from: Option<usize>,
    to: Option<usize>,
    view: PositionView,
}

/// Resolves a network name of this server: `bootstrap`, `<run>` (its best model) or
/// `<run>/gen-NNNN`. Never a path: run directories are named by their ids.
fn net_source(s: &AppState, name: &str) -> Result<NetSource, ApiError> {
    if name == eval::BOOTSTRAP_BEST {
        return Ok(NetSource::Bootstrap);
    }
    let (run, model) = match name.split_once('/') {
        Some((r, m)) => (r, Some(m)),
        None => (name, None),
    };
    let dir = s.runs.dir(run).map_err(|_| {
        ApiError::Forbidden(format!(
            "network `{name}`: this server names networks `bootstrap`, `<run>` or `<run>/gen-NNNN` for its runs, never by path"
        ))
    })?;
    let path: PathBuf = match model {
        None => dir.to_path_buf(),
        Some(m) => {
            let g = rundir::parse_generation(m)
                .ok_or_else(|| ApiError::BadRequest(format!("model `{m}`: expected gen-NNNN")))?;
            let p = rundir::RunDir::new(dir).generation_model(g);
            if !p.join("model.json").is_file() {
                if rundir::network_removed(&p) {
                    return Err(ApiError::NotFound(format!(
                        "run `{run}` no longer keeps the network of {m}: its retention removed it (run.keep_models)"
                    )));
                }
                return Err(ApiError::NotFound(format!("run `{run}` has no model {m}")));
            }
            p
        }
    };
    Ok(NetSource::Path(path))
}

/// A player name of the CLI, made safe to run here: no external engines, networks only
/// by the server's names, and bounded thinking.
fn player_spec(s: &AppState, name: &str) -> Result<PlayerSpec, ApiError> {
    let spec: PlayerSpec = name
        .parse()
        .map_err(|e: eval::BadPlayerName| ApiError::BadRequest(e.to_string()))?;
    Ok(match spec {
        PlayerSpec::Uai { .. } | PlayerSpec::Nboard { .. } => {
            return Err(ApiError::Forbidden(
                "external engines (uai:, nboard:) cannot be started from the web page".into(),
            ));
        }
        PlayerSpec::Mcts {
            net,
            sims,
            time,
            engine,
            basic,
            params,
        } => {
            if sims > MAX_SIMS || time.is_some_and(|t| t > MAX_THINK) {
                return Err(ApiError::BadRequest(format!(
                    "at most {MAX_SIMS} simulations or {} ms a move here",
                    MAX_THINK.as_millis()
                )));
            }
            let net = match net {
                NetSource::Bootstrap => NetSource::Bootstrap,
                NetSource::Path(p) => net_source(s, &p.to_string_lossy())?,
            };
            PlayerSpec::Mcts {
                net,
                sims,
                time,
                engine,
                basic,
                params,
            }
        }
        PlayerSpec::AlphaBeta { mut limits, search } => {
            limits.time = Some(limits.time.map_or(MAX_THINK, |t| t.min(MAX_THINK)));
            PlayerSpec::AlphaBeta { limits, search }
        }
        PlayerSpec::NetAlphaBeta {
            net,
            mut limits,
            search,
        } => {
            let NetSource::Path(net) = net_source(s, &net.to_string_lossy())? else {
                return Err(ApiError::BadRequest(
                    "abnet: plays a fast net, not the bootstrap evaluator".into(),
                ));
            };
            limits.time = Some(limits.time.map_or(MAX_THINK, |t| t.min(MAX_THINK)));
            PlayerSpec::NetAlphaBeta {
                net,
                limits,
                search,
            }
        }
        other => other,
    })
}

/// Sets its flag when dropped: when the request's future ends, finished or dropped
/// because the client hung up.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Runs `f` on a blocking thread once a search slot is free (503 after the wait).
///
/// The slot (a permit of `searches`) moves into the thread and is given back only when
/// `f` returns, so at most `max_searches` searches run however their clients behave.
/// `f` gets a stop flag that is set once nobody waits for the answer any more (the
/// client hung up and the request was dropped): the players poll it, so a search whose
/// client has gone ends within milliseconds and frees its slot.
async fn search<T: Send + 'static>(
    s: &AppState,
    f: impl FnOnce(&AtomicBool) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let permit = tokio::time::timeout(s.config.queue_wait, s.searches.clone().acquire_owned())
        .await
        .map_err(|_| ApiError::Busy)?
        .map_err(|_| ApiError::Busy)?;
    let stop = Arc::new(AtomicBool::new(false));
    let _stop_when_dropped = StopOnDrop(stop.clone());
    blocking(move || {
        let _slot = permit;
        f(&stop)
    })
    .await
}

/// Runs `f` on a blocking thread; a panic there is a 500, never a dead server.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::Internal(format!("the request failed: {e}")))?
}

/// The game and position of a request that needs a move to be made (400 for a finished
/// game, saying `why`).
fn position_in_play(
    game: &str,
    position: Option<&str>,
    why: &str,
) -> Result<(engine::Game, engine::State), ApiError> {
    let game = parse_game(game)?;
    let state = parse_state(game, position)?;
    if state.is_game_over() {
        return Err(ApiError::BadRequest(format!("the game is over: {why}")));
    }
    Ok((game, state))
}

async fn think(
    State(s): Shared,
    body: Result<Json<ThinkBody>, JsonRejection>,
) -> Result<Json<ThinkAnswer>, ApiError> {
    let Json(b) = body.map_err(bad_json)?;
    let (game, state) = position_in_play(
        &b.game,
        b.position.as_deref(),
        "there is nothing to think about",
    )?;
    let spec = player_spec(&s, &b.player)?;
    let name = b.player.clone();
    let seed = b.seed;
    search(&s, move |stop| {
        let mut player = spec.build(game, seed, Timeouts::default()).map_err(|e| {
            ApiError::BadRequest(format!("player `{name}` cannot play {game}: {e}"))
        })?;
        player
            .new_game()
            .map_err(|e| ApiError::Internal(format!("player `{name}`: {e}")))?;
        let mv = player
            .choose_until(&state, stop)
            .map_err(|e| ApiError::Internal(format!("player `{name}` failed to move: {e}")))?;
        if !state.is_legal(mv) {
            return Err(ApiError::Internal(format!(
                "player `{name}` chose an illegal move"
            )));
        }
        let (from, to) = move_cells(mv);
        Ok(ThinkAnswer {
            player: name,
            mv: state.move_to_string(mv),
            from,
            to,
            view: view(&state.after(mv)),
        })
    })
    .await
    .map(Json)
}

#[derive(Deserialize)]
struct AnalyseBody {
    game: String,
    position: Option<String>,
    #[serde(default = "bootstrap")]
    net: String,
}

fn bootstrap() -> String {
    eval::BOOTSTRAP_BEST.into()
}

/// A network's view of a position, averaged over the board's symmetries
/// ([`crate::insight::net_view`]).
#[derive(serde::Serialize)]
struct Analysis {
    net: String,
    /// Win − loss expectation, side-to-move view: the mean over the symmetries.
    value: f32,
    /// The lowest and highest of the symmetries' values.
    value_range: [f32; 2],
    /// Symmetries averaged.
    symmetries: usize,
    wdl: Option<[f32; 3]>,
    policy: Vec<games::PolicyEntry>,
    view: PositionView,
}

async fn analyse(
    State(s): Shared,
    body: Result<Json<AnalyseBody>, JsonRejection>,
) -> Result<Json<Analysis>, ApiError> {
    let Json(b) = body.map_err(bad_json)?;
    let (game, state) = position_in_play(&b.game, b.position.as_deref(), "no moves to weigh")?;
    let source = net_source(&s, &b.net)?;
    let name = b.net.clone();
    search(&s, move |_stop| {
        let mut ev = eval::build_evaluator(&source, game, eval::NetEngine::Fast)
            .map_err(|e| ApiError::BadRequest(format!("network `{name}`: {e}")))?;
        let moves = state.legal_moves();
        let e = crate::insight::net_view(ev.as_mut(), &state, &moves)
            .ok_or_else(|| ApiError::Internal("the network gave no evaluation".into()))?;
        let mut policy: Vec<games::PolicyEntry> = moves
            .iter()
            .zip(&e.policy)
            .map(|(&m, &p)| {
                let (from, to) = move_cells(m);
                games::PolicyEntry {
                    text: state.move_to_string(m),
                    from,
                    to,
                    p,
                }
            })
            .collect();
        policy.sort_by(|a, b| b.p.total_cmp(&a.p));
        Ok(Analysis {
            net: name,
            value: e.value,
            value_range: e.value_range,
            symmetries: e.symmetries,
            wdl: e.wdl,
            policy,
            view: view(&state),
        })
    })
    .await
    .map(Json)
}

#[derive(Deserialize)]
struct SearchBody {
    game: String,
    position: Option<String>,
    #[serde(default = "bootstrap")]
    net: String,
    sims: u32,
    #[serde(default)]
    seed: u64,
}

/// A network's tree search of a position, with each candidate move's visits, value,
/// prior and principal variation.
async fn search_position(
    State(s): Shared,
    body: Result<Json<SearchBody>, JsonRejection>,
) -> Result<Json<crate::insight::SearchInsight>, ApiError> {
    let Json(b) = body.map_err(bad_json)?;
    if !(1..=MAX_SIMS).contains(&b.sims) {
        return Err(ApiError::BadRequest(format!(
            "sims = {}: from 1 to {MAX_SIMS} here",
            b.sims
        )));
    }
    let (game, state) = position_in_play(&b.game, b.position.as_deref(), "no moves to search")?;
    let source = net_source(&s, &b.net)?;
    search(&s, move |stop| {
        crate::insight::search(b.net, &source, game, &state, b.sims, b.seed, stop)
    })
    .await
    .map(Json)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    /// Waits up to a second for `cond`.
    fn soon(cond: impl Fn() -> bool) -> bool {
        let deadline = Instant::now() + Duration::from_secs(1);
        while Instant::now() < deadline {
            if cond() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        cond()
    }

    #[test]
    fn a_dropped_search_is_told_to_stop_and_keeps_its_slot_until_it_ends() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let state = Arc::new(
            AppState::new(ServeConfig {
                runs: vec![],
                max_searches: 1,
                queue_wait: Duration::from_millis(10),
                token: None,
            })
            .unwrap(),
        );
        // The search runs until told to stop, says so, then waits to be let go.
        let (stopped, release) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let (seen, go) = (stopped.clone(), release.clone());
        let s = state.clone();
        let task = rt.spawn(async move {
            search(&s, move |stop| {
                let deadline = Instant::now() + Duration::from_secs(5);
                while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(1));
                }
                seen.store(stop.load(Ordering::Relaxed), Ordering::Relaxed);
                while !go.load(Ordering::Relaxed) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Ok(())
            })
            .await
        });
        assert!(
            soon(|| state.searches.available_permits() == 0),
            "the search never started"
        );
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            !stopped.load(Ordering::Relaxed),
            "stopped while its client waits"
        );
        // The client hangs up: the request's future is dropped.
        task.abort();
        assert!(
            soon(|| stopped.load(Ordering::Relaxed)),
            "the search was not told to stop"
        );
        // Still running: the slot stays taken, and another search is refused.
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(
            state.searches.available_permits(),
            0,
            "the slot was freed while the search runs"
        );
        let s = state.clone();
        let other = rt.block_on(async move { search(&s, |_| Ok(())).await });
        assert!(
            matches!(other, Err(ApiError::Busy)),
            "a second search ran beside the first"
        );
        // It ends: the slot is free again.
        release.store(true, Ordering::Relaxed);
        assert!(
            soon(|| state.searches.available_permits() == 1),
            "the slot was not given back"
        );
        let s = state.clone();
        let other = rt.block_on(async move { search(&s, |_| Ok(7)).await });
        assert_eq!(other.unwrap(), 7);
    }
}
