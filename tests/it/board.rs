//! `flipzero serve`'s analysis board, viewer and play page in Chromium (issue #54): a
//! line played on the analysis board with a variation, the search's arrows, a line
//! previewed and played from the table, the symmetry-averaged view; a deep link that
//! drives the viewer's selectors and a viewer in step with its list and graph; the play
//! page's defaults from the run, take-back, clickable moves, the network's evaluation,
//! illegal clicks explained and errors that clear; a dashboard that explains what a run
//! did not produce and stops polling a finished run. Screenshots (the new-user tour at
//! 1280 px and 390 px) go to target/screenshots/.

use std::path::Path;

use engine::{Game, MoveKind};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

use crate::browser::{open, runtime, screenshot, serve_and_browser, viewer_at, wait_for};
use crate::serve::{copy_dir, micro_run, shard_games};

/// Runs `script` and returns its value.
async fn js(c: &Client, script: &str) -> Value {
    c.execute(script, vec![]).await.unwrap()
}

/// The CSS selector of `cell`'s background on board `board`.
fn cell(board: &str, sq: engine::Square) -> String {
    format!("#{board} g[data-cell='{}'] .cell-bg", sq.index())
}

/// Clicks the cells of `mv` on board `board` (a jump: its source's piece, then its
/// target).
async fn click_move(c: &Client, board: &str, side: &str, mv: engine::Move) {
    if board == "an-board" {
        // The analysis board is redrawn as its search grows: each click is one script,
        // not a find and a click that a redraw can fall between.
        let click = |sel: String| {
            format!(
                "document.querySelector({}).dispatchEvent(new MouseEvent('click', {{bubbles: true}})); return null;",
                json!(sel)
            )
        };
        match mv.kind() {
            MoveKind::Clone { to } => {
                js(c, &click(cell(board, to))).await;
            }
            MoveKind::Jump { from, to } => {
                js(
                    c,
                    &click(format!(
                        "#{board} g[data-cell='{}'] .piece-{side}",
                        from.index()
                    )),
                )
                .await;
                js(c, &click(cell(board, to))).await;
            }
            MoveKind::Pass => panic!("no pass here"),
        }
        return;
    }
    match mv.kind() {
        MoveKind::Pass => panic!("no pass here"),
        MoveKind::Clone { to } => {
            c.find(Locator::Css(&cell(board, to)))
                .await
                .unwrap()
                .click()
                .await
                .unwrap();
        }
        MoveKind::Jump { from, to } => {
            let piece = format!("#{board} g[data-cell='{}'] .piece-{side}", from.index());
            c.find(Locator::Css(&piece))
                .await
                .unwrap()
                .click()
                .await
                .unwrap();
            c.find(Locator::Css(&cell(board, to)))
                .await
                .unwrap()
                .click()
                .await
                .unwrap();
        }
    }
}

/// The analysis board's search, finished at the chosen count.
const SEARCH_DONE: &str = "const a = document.getElementById('an-search'); return a.dataset.done === 'true' && document.getElementById('an-board').dataset.position;";

/// The analysis board's search of `position`, finished at the chosen count (a move
/// played is answered by the server before the board shows it: until then the last
/// position's finished search is on show).
fn search_done_at(position: &str) -> String {
    format!(
        "const a = document.getElementById('an-search'); const p = document.getElementById('an-board').dataset.position; return a.dataset.done === 'true' && p === {} && p;",
        json!(position)
    )
}

#[test]
fn browser_analysis_board_plays_lines_and_variations_with_arrows_and_previews() {
    let run = micro_run();
    let (_srv, driver, base) = serve_and_browser(&[run]);
    let id = run.file_name().unwrap().to_str().unwrap().to_string();
    let game: Game = "ataxx".parse().unwrap();
    let start = game.startpos();
    runtime().block_on(async {
        let c = driver.client().await;
        open(&c, &format!("{base}/#play")).await;
        // Defaults from the run: its best network, as opponent and for analysis.
        let d = js(&c, "return [document.getElementById('opp-net').value, document.getElementById('play-player').value, document.getElementById('an-net').value]").await;
        assert_eq!(d, json!([id, format!("mcts:{id}:sims=200"), id]));
        // Choices made by hand: a strength, an analysis network.
        js(&c, &format!("const s = document.getElementById('opp-strength'); s.value = 'sims=64'; s.dispatchEvent(new Event('change')); \
            const n = document.getElementById('an-net'); n.value = '{id}/gen-0000'; n.dispatchEvent(new Event('change')); return null;")).await;
        // Another game's networks are not offered (the run plays Ataxx).
        js(&c, "const g = document.getElementById('play-game'); g.value = 'hexxagon'; g.dispatchEvent(new Event('change')); return null;").await;
        let hex = js(&c, "return [[...document.getElementById('opp-net').options].map((o) => o.value), document.getElementById('play-player').value, document.getElementById('an-net').value]").await;
        assert!(hex[0].as_array().unwrap().iter().all(|v| !v.as_str().unwrap().starts_with(&id)), "{hex}");
        assert_eq!(hex[1], "ab2");
        assert_eq!(hex[2], "bootstrap");
        js(&c, "const g = document.getElementById('play-game'); g.value = 'ataxx'; g.dispatchEvent(new Event('change')); return null;").await;
        // Back on Ataxx: the run's net at the strength chosen, the analysis network chosen.
        wait_for(&c, &format!("return document.getElementById('play-player').value === 'mcts:{id}:sims=64'"), "the run's net again").await;
        let back = js(&c, "return [document.getElementById('opp-net').value, document.getElementById('opp-strength').disabled, document.getElementById('an-net').value]").await;
        assert_eq!(back, json!([id, false, format!("{id}/gen-0000")]));
        js(&c, &format!("document.getElementById('an-net').value = '{id}'; document.getElementById('an-net').dataset.chosen = '{id}'; return null;")).await;

        // The start analysed: the mean of the 8 symmetries and their range; the search
        // with arrows for its best moves and a score for each candidate.
        js(&c, "document.getElementById('an-sims').value = '100'; document.getElementById('an-here').click(); return null;").await;
        assert_eq!(wait_for(&c, SEARCH_DONE, "the search").await, start.text().as_str());
        let result = js(&c, "return document.getElementById('an-result').textContent").await;
        let result = result.as_str().unwrap();
        assert!(result.contains("8 symmetries") && result.contains("expected score"), "{result}");
        let rows = js(&c, "return [...document.querySelectorAll('#an-search tr.candidate')].map((r) => [...r.cells].map((c) => c.textContent))").await;
        let rows = rows.as_array().unwrap();
        assert_eq!(rows.len(), start.legal_moves().len().min(12));
        let first = rows[0].as_array().unwrap();
        let q: f64 = first[2].as_str().unwrap().parse().unwrap();
        assert_eq!(first[3].as_str().unwrap(), format!("{:.0}%", 50.0 * (1.0 + q)));
        let arrows = js(&c, "return [...document.querySelectorAll('#an-board .arrows .arrow')].map((a) => [a.dataset.move, a.getAttribute('stroke')])").await;
        let arrows = arrows.as_array().unwrap();
        assert!(!arrows.is_empty() && arrows.len() <= 3, "{arrows:?}");
        assert_eq!(arrows[0], json!([first[0], "#15781b"]), "the most visited move, in green");

        // Hovering a line shows where it leads; leaving it, the position again.
        let pv: Vec<String> = first[5].as_str().unwrap().split(' ').map(str::to_string).collect();
        let mut end = start;
        for m in &pv {
            end = end.after(end.parse_move(m).unwrap());
        }
        js(&c, "document.querySelector('#an-search tr.candidate').dispatchEvent(new MouseEvent('mouseenter')); return null;").await;
        let shown = js(&c, "const b = document.getElementById('an-board'); return [b.dataset.position, b.dataset.preview]").await;
        assert_eq!(shown, json!([end.text(), pv.join(" ")]));
        js(&c, "document.querySelector('#an-search tr.candidate').dispatchEvent(new MouseEvent('mouseleave')); return null;").await;
        assert_eq!(js(&c, "return document.getElementById('an-board').dataset.position").await, start.text().as_str());

        // A move played on the board: the tree's first move, analysed in turn.
        let moves = start.legal_moves();
        let m1 = moves.iter().copied().find(|m| matches!(m.kind(), MoveKind::Clone { .. })).unwrap();
        let m2 = moves.iter().copied().filter(|m| matches!(m.kind(), MoveKind::Clone { .. })).nth(1).unwrap();
        let (t1, t2) = (start.move_to_string(m1), start.move_to_string(m2));
        click_move(&c, "an-board", "x", m1).await;
        wait_for(&c, &search_done_at(&start.after(m1).text()), "the search after a move").await;
        // Back, and another move: a variation, in parentheses after the main move.
        js(&c, "document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowLeft', bubbles: true})); return null;").await;
        wait_for(&c, &format!("return document.getElementById('an-board').dataset.position === {}", json!(start.text())), "back at the start").await;
        click_move(&c, "an-board", "x", m2).await;
        wait_for(&c, &search_done_at(&start.after(m2).text()), "the variation's search").await;
        let tree = js(&c, "const t = document.getElementById('an-tree'); return [t.textContent, t.querySelectorAll('.variation').length, t.querySelector('.current').textContent]").await;
        assert_eq!(tree, json!([format!("1.{t1}(1.{t2})"), 1, t2]));

        // A click on a line of the table plays it onto the tree and goes to its end.
        let row = js(&c, "const r = document.querySelector('#an-search tr.candidate'); return r.cells[5].textContent").await;
        let line: Vec<String> = row.as_str().unwrap().split(' ').map(str::to_string).collect();
        let mut at = start.after(m2);
        for m in &line {
            at = at.after(at.parse_move(m).unwrap());
        }
        js(&c, "document.querySelector('#an-search tr.candidate').click(); return null;").await;
        assert_eq!(wait_for(&c, &format!("const b = document.getElementById('an-board'); return b.dataset.position === {} && b.dataset.position", json!(at.text())), "the line's end").await, at.text().as_str());
        let n = js(&c, "return document.querySelectorAll('#an-tree button.move').length").await;
        assert_eq!(n, json!(2 + line.len()));
        c.execute("document.getElementById('an-result').scrollIntoView(); return null;", vec![]).await.unwrap();
        wait_for(&c, &search_done_at(&at.text()), "the search at the line's end").await;
        screenshot(&c, "tour-analysis-1280.png").await;
        // Deleting the variation's first move takes the line with it.
        js(&c, "document.querySelector('#an-tree .variation button.move[data-ply=\"1\"]').click(); return null;").await;
        wait_for(&c, &format!("return document.getElementById('an-board').dataset.position === {}", json!(start.after(m2).text())), "the variation's move").await;
        js(&c, "document.getElementById('an-delete').click(); return null;").await;
        let after = wait_for(&c, "const t = document.getElementById('an-tree'); return t.querySelectorAll('.variation').length === 0 && [t.querySelectorAll('button.move').length, document.getElementById('an-board').dataset.position]", "the variation removed").await;
        assert_eq!(after, json!([1, start.text()]));

        // A position with o to move: the tree numbers o's move "1..." and x's reply "2.".
        let o_first = game.parse_position("x5o/7/7/7/7/7/o5x o 0 1").unwrap();
        js(&c, &format!("document.getElementById('an-position').value = {}; document.getElementById('an-go').click(); return null;", json!(o_first.text()))).await;
        wait_for(&c, &search_done_at(&o_first.text()), "o's position").await;
        let mo = o_first.legal_moves().into_iter().find(|m| matches!(m.kind(), MoveKind::Clone { .. })).unwrap();
        click_move(&c, "an-board", "o", mo).await;
        let after_o = o_first.after(mo);
        wait_for(&c, &search_done_at(&after_o.text()), "after o's move").await;
        let mx = after_o.legal_moves().into_iter().find(|m| matches!(m.kind(), MoveKind::Clone { .. })).unwrap();
        click_move(&c, "an-board", "x", mx).await;
        wait_for(&c, &search_done_at(&after_o.after(mx).text()), "after x's reply").await;
        let numbers = js(&c, "return [...document.querySelectorAll('#an-tree .move-no')].map((n) => n.textContent)").await;
        assert_eq!(numbers, json!(["1...", "2."]));

        // A phone: the analysis board fits.
        c.set_window_size(390, 844).await.unwrap();
        let w = js(&c, "return [document.documentElement.scrollWidth, window.innerWidth]").await;
        assert!(w[0].as_u64().unwrap() <= w[1].as_u64().unwrap(), "{w}");
        js(&c, "document.getElementById('an-board').scrollIntoView(); return null;").await;
        screenshot(&c, "tour-analysis-390.png").await;
        c.close().await.unwrap();
    });
}

#[test]
fn browser_viewer_follows_a_deep_link_and_play_takes_back_and_explains() {
    let run = micro_run();
    let (_srv, driver, base) = serve_and_browser(&[run]);
    let id = run.file_name().unwrap().to_str().unwrap().to_string();
    let games = shard_games(run, 1);
    let (gid, rows) = games.iter().next().unwrap();
    let g: Game = rows[0].variant.parse().unwrap();
    runtime().block_on(async {
        let c = driver.client().await;
        // A deep link: the selectors say its generation, the list holds its game,
        // selected; the board is the position after ply 3, outlining the third move.
        open(&c, &format!("{base}/#games/{id}/1/selfplay/{gid}/3")).await;
        let ply = viewer_at;
        assert_eq!(wait_for(&c, &ply(3), "ply 3").await, rows[3].fen.as_str());
        let sel = js(&c, &format!("return [document.getElementById('games-gen').value, document.querySelectorAll('#games-table tbody tr.viewable').length > 0, !!document.querySelector('#games-table tr.selected[data-id=\"{gid}\"][data-generation=\"1\"]'), document.getElementById('view-ply').textContent, document.querySelector('#view-moves .current').dataset.ply]")).await;
        assert_eq!(sel[0], "1");
        assert_eq!(sel[1], true);
        assert_eq!(sel[2], true, "the linked game is selected in the list");
        assert!(sel[3].as_str().unwrap().starts_with(&format!("after ply 3 of {}", rows.len())), "{sel}");
        assert_eq!(sel[4], "3");
        let st = g.parse_position(&rows[2].fen).unwrap();
        let third = st.legal_moves().into_iter().find(|&m| st.policy_index(m) == rows[2].played as usize).unwrap();
        let mut want: Vec<usize> = match third.kind() {
            MoveKind::Clone { to } => vec![to.index()],
            MoveKind::Jump { from, to } => vec![from.index(), to.index()],
            MoveKind::Pass => vec![],
        };
        want.sort();
        let outlined = js(&c, "return [...document.querySelectorAll('#view-board .cell.last')].map((g) => +g.dataset.cell).sort((a, b) => a - b)").await;
        assert_eq!(outlined, json!(want));
        // The value graph: an axis with labels, and a readout on hover.
        let tip = js(&c, "const s = document.getElementById('view-value'); const r = s.getBoundingClientRect(); \
            s.dispatchEvent(new MouseEvent('mousemove', {clientX: r.left + r.width * 0.5, clientY: r.top + r.height / 2, bubbles: true})); \
            return [[...s.querySelectorAll('.vg-tick')].map((t) => t.textContent), document.getElementById('view-value-tip').textContent, +s.dataset.hover]").await;
        let ticks = tip[0].as_array().unwrap();
        assert!(ticks.contains(&json!("+1 x")) && ticks.contains(&json!("−1 o")) && ticks.contains(&json!("0")), "{tip}");
        let k = tip[2].as_u64().unwrap() as usize;
        // The readout names the ply a click there goes to (the position after k plies).
        assert!(tip[1].as_str().unwrap().starts_with(&format!("after ply {k}, ")), "{tip}");
        js(&c, "const s = document.getElementById('view-value'); const r = s.getBoundingClientRect(); \
            s.dispatchEvent(new MouseEvent('click', {clientX: r.left + r.width * 0.5, clientY: r.top + r.height / 2, bubbles: true})); return null;").await;
        assert_eq!(js(&c, "return document.getElementById('view-board').dataset.ply").await, k.to_string().as_str());
        // The list keeps the current move in sight at the end of a long game.
        js(&c, "document.dispatchEvent(new KeyboardEvent('keydown', {key: 'End', bubbles: true})); return null;").await;
        wait_for(&c, &ply(rows.len()), "the end").await;
        let seen = js(&c, "const b = document.getElementById('view-moves'), m = b.querySelector('.current'); \
            return [m.offsetTop - b.offsetTop >= b.scrollTop - 1, m.offsetTop - b.offsetTop + m.offsetHeight <= b.scrollTop + b.clientHeight + 1]").await;
        assert_eq!(seen, json!([true, true]));
        screenshot(&c, "tour-viewer-1280.png").await;

        // A link to a generation the run lacks: said, the selectors stay, no game shown.
        js(&c, &format!("location.hash = '#games/{id}/7/selfplay/{gid}/3'; return null;")).await;
        let bad = wait_for(&c, "const e = document.getElementById('error').textContent; return e !== '' && [e, document.getElementById('games-gen').value, document.getElementById('games-run').value, document.getElementById('view-ply').textContent]", "the refusal").await;
        assert!(bad[0].as_str().unwrap().contains("no generation 7"), "{bad}");
        assert_eq!(bad[1], "1");
        assert_eq!(bad[2], id.as_str());
        assert_eq!(bad[3], "no game");
        // A good link again: the game, and the error gone.
        js(&c, &format!("location.hash = '#games/{id}/1/selfplay/{gid}/2'; return null;")).await;
        wait_for(&c, &ply(2), "ply 2 after the bad link").await;
        wait_for(&c, "return document.getElementById('error').textContent === ''", "the error cleared").await;

        // Analyse from here: the network that played the game (generation 1 was played
        // by gen-0000), not bootstrap.
        js(&c, "document.getElementById('an-sims').value = '100'; return null;").await;
        c.find(Locator::Css("#view-moves button.move[data-ply='2']")).await.unwrap().click().await.unwrap();
        wait_for(&c, &ply(2), "ply 2").await;
        c.find(Locator::Id("view-analyse")).await.unwrap().click().await.unwrap();
        wait_for(&c, &search_done_at(&rows[2].fen), "the analysis").await;
        assert_eq!(js(&c, "return document.getElementById('an-net').value").await, format!("{id}/gen-0000").as_str());

        // Play from here: the same network is the opponent.
        open(&c, &format!("{base}/#games/{id}/1/selfplay/{gid}/2")).await;
        wait_for(&c, &ply(2), "ply 2").await;
        let side = if st.side_to_move() == engine::Side::X { "x" } else { "o" };
        js(&c, &format!("document.getElementById('play-side').value = '{side}'; return null;")).await;
        c.find(Locator::Id("view-play")).await.unwrap().click().await.unwrap();
        let human = "const b = document.getElementById('play-board'); return b.dataset.busy === 'false' && b.dataset.turn === 'human' && b.dataset.position";
        assert_eq!(wait_for(&c, human, "the game from ply 2").await, rows[2].fen.as_str());
        assert_eq!(js(&c, "return document.getElementById('play-player').value").await, format!("mcts:{id}/gen-0000:sims=200").as_str());
        // The network's evaluation of the board, for x.
        let ev = wait_for(&c, "const e = document.getElementById('play-eval'); return e.dataset.value !== undefined && e.textContent", "the evaluation").await;
        assert!(ev.as_str().unwrap().contains("for x"), "{ev}");

        // An illegal click says why; a legal move is answered; take-back returns.
        let pos = g.parse_position(&rows[2].fen).unwrap();
        let far = g.cells().into_iter().find(|&cl| {
            !pos.is_blocked(cl) && pos.piece_at(cl).is_none() && !pos.legal_moves().iter().any(|m| matches!(m.kind(), MoveKind::Clone { to } | MoveKind::Jump { to, .. } if to.index() == cl))
        });
        if let Some(far) = far {
            c.find(Locator::Css(&format!("#play-board g[data-cell='{far}'] .cell-bg"))).await.unwrap().click().await.unwrap();
            let hint = wait_for(&c, "const h = document.getElementById('play-hint').textContent; return h !== '' && h", "the hint").await;
            assert!(hint.as_str().unwrap().contains("not a legal move"), "{hint}");
        }
        let mv = pos.legal_moves().into_iter().find(|m| matches!(m.kind(), MoveKind::Clone { .. })).unwrap();
        click_move(&c, "play-board", side, mv).await;
        let after = wait_for(&c, "const b = document.getElementById('play-board'); const m = document.getElementById('play-moves').dataset.moves; return b.dataset.busy === 'false' && b.dataset.turn === 'human' && m.split(' ').length >= 2 && [m, document.getElementById('play-hint').textContent]", "the reply").await;
        assert_eq!(after[1], "", "a legal move clears the hint");
        // A click on the first move shows the position after it; back to the game.
        js(&c, "document.querySelector('#play-moves button.move[data-ply=\"1\"]').click(); return null;").await;
        assert_eq!(js(&c, "return document.getElementById('play-board').dataset.position").await, pos.after(mv).text().as_str());
        js(&c, "document.getElementById('play-resume').click(); return null;").await;
        c.find(Locator::Id("play-back")).await.unwrap().click().await.unwrap();
        let back = wait_for(&c, "const b = document.getElementById('play-board'); return b.dataset.busy === 'false' && b.dataset.turn === 'human' && [b.dataset.position, document.getElementById('play-moves').dataset.moves]", "the take-back").await;
        assert_eq!(back, json!([rows[2].fen, ""]));
        screenshot(&c, "tour-play-1280.png").await;

        // An error from a bad "From" position clears with the next good game.
        js(&c, "document.getElementById('play-start').value = 'not a position'; document.getElementById('play-new').click(); return null;").await;
        wait_for(&c, "return document.getElementById('error').textContent !== ''", "the error").await;
        js(&c, "document.getElementById('play-start').value = ''; document.getElementById('play-new').click(); return null;").await;
        wait_for(&c, "return document.getElementById('error').textContent === '' && document.getElementById('play-board').dataset.busy === 'false'", "the error cleared").await;

        c.set_window_size(390, 844).await.unwrap();
        open(&c, &format!("{base}/#games/{id}/1/selfplay/{gid}/5")).await;
        wait_for(&c, &ply(5), "ply 5 on a phone").await;
        let w = js(&c, "return [document.documentElement.scrollWidth, window.innerWidth, document.getElementById('games-gen').value]").await;
        assert!(w[0].as_u64().unwrap() <= w[1].as_u64().unwrap(), "{w}");
        assert_eq!(w[2], "1");
        js(&c, "document.getElementById('viewer').scrollIntoView(); return null;").await;
        screenshot(&c, "tour-viewer-390.png").await;
        c.close().await.unwrap();
    });
}

/// A copy of the micro run whose newest generation played no games (its self-play and
/// evaluation records and games removed: a run's final net, trained and never played).
fn run_without_newest_games(to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    copy_dir(micro_run(), to);
    std::fs::remove_dir_all(to.join("selfplay/gen-0001")).unwrap();
    for e in std::fs::read_dir(to.join("eval")).unwrap() {
        let p = e.unwrap().path();
        if p.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("gen-0001")
        {
            std::fs::remove_file(p).unwrap();
        }
    }
}

#[test]
fn browser_games_open_on_the_newest_generation_that_played_and_say_when_none_did() {
    let copy = rundir::Scratch::temp("board", "nogames");
    run_without_newest_games(&copy);
    let (_srv, driver, base) = serve_and_browser(&[&copy]);
    runtime().block_on(async {
        let c = driver.client().await;
        open(&c, &format!("{base}/#games")).await;
        let first = wait_for(&c, "const n = document.querySelectorAll('#games-table tbody tr.viewable').length; return n > 0 && [document.getElementById('games-gen').value, n]", "the games").await;
        assert_eq!(first[0], "0", "the newest generation that played");
        // A generation without games says so.
        js(&c, "const g = document.getElementById('games-gen'); g.value = '1'; g.dataset.chosen = '1'; const s = document.getElementById('games-source'); s.value = 'selfplay'; s.dispatchEvent(new Event('change')); return null;").await;
        let empty = wait_for(&c, "const r = document.querySelector('#games-table tbody tr.empty'); return r && r.textContent", "the empty list's word").await;
        assert!(empty.as_str().unwrap().contains("no recorded games in generation 1"), "{empty}");

        c.close().await.unwrap();
    });
}

#[test]
fn browser_a_finished_run_is_not_polled_and_its_charts_fill_the_page() {
    let (_srv, driver, base) = serve_and_browser(&[micro_run()]);
    runtime().block_on(async {
        let c = driver.client().await;
        // Opened on another page first: the charts are drawn while hidden, and drawn
        // again at their width when the dashboard is shown.
        open(&c, &format!("{base}/#games")).await;
        js(&c, "location.hash = '#dashboard'; return null;").await;
        let fit = wait_for(&c, "const s = document.getElementById('loss-chart'); const w = +s.getAttribute('viewBox').split(' ')[2]; return s.querySelector('path.series') && [w, s.parentNode.clientWidth];", "the loss chart").await;
        let (w, room) = (fit[0].as_f64().unwrap(), fit[1].as_f64().unwrap());
        assert!((w - (room - 12.0)).abs() <= 2.0, "{fit}");
        // A finished run is read and then no longer polled; its charts
        // fill the page's width; the loss chart marks each generation.
        open(&c, &format!("{base}/#dashboard")).await;
        let rest = wait_for(&c, "return document.body.dataset.polling === 'false' && !document.getElementById('dash-poll').hidden", "the poll to stop").await;
        assert_eq!(rest, true);
        let fig = js(&c, "const f = document.getElementById('loss-fig').getBoundingClientRect(); return [f.width, document.documentElement.clientWidth, +document.getElementById('loss-chart').dataset.markers]").await;
        assert!(fig[0].as_f64().unwrap() > 0.9 * (fig[1].as_f64().unwrap() - 40.0), "{fig}");
        assert_eq!(fig[2], 2, "a marker for each trained generation");
        // Zooming into the later steps rescales the y axis to them.
        let ticks = js(&c, "const s = document.getElementById('loss-chart'); const r = s.getBoundingClientRect(); const all = s.dataset.yTicks; \
            const ev = (t, f) => s.dispatchEvent(new MouseEvent(t, {clientX: r.left + r.width * f, clientY: r.top + 20, bubbles: true})); \
            ev('mousedown', 0.75); ev('mouseup', 0.99); return [all, s.dataset.yTicks];").await;
        assert_ne!(ticks[0], ticks[1], "{ticks}");
        // On a log scale the ticks read alike: no trailing zeros beside whole numbers.
        js(&c, "document.getElementById('loss-reset').click(); const l = document.getElementById('loss-log'); l.checked = true; l.dispatchEvent(new Event('change')); return null;").await;
        let log = js(&c, "return document.getElementById('loss-chart').dataset.yTicks").await;
        let log: Vec<&str> = log.as_str().unwrap().split(' ').collect();
        assert!(log.len() >= 2, "{log:?}");
        assert!(log.iter().all(|t| !(t.contains('.') && t.ends_with('0'))), "{log:?}");
        let api = js(&c, "return performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/runs/')).length").await;
        tokio::time::sleep(std::time::Duration::from_secs(5)).await;
        assert_eq!(js(&c, "return performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/runs/')).length").await, api, "a finished run is not polled");
        screenshot(&c, "tour-dashboard-1280.png").await;
        c.close().await.unwrap();
    });
}

/// The Elo panels of a run that rated nothing say why instead of drawing empty charts.
#[test]
fn browser_a_run_without_ratings_says_why() {
    let copy = rundir::Scratch::temp("board", "noelo");
    copy_dir(micro_run(), &copy);
    for e in std::fs::read_dir(copy.join("eval")).unwrap() {
        std::fs::remove_file(e.unwrap().path()).unwrap();
    }
    let (_srv, driver, base) = serve_and_browser(&[&copy]);
    runtime().block_on(async {
        let c = driver.client().await;
        open(&c, &format!("{base}/#dashboard")).await;
        let note = wait_for(&c, "const n = document.getElementById('elo-note'); return !n.hidden && [n.textContent, document.getElementById('elo-fig').hidden, document.getElementById('loss-fig').hidden]", "the note").await;
        assert!(note[0].as_str().unwrap().contains("was evaluated"), "{note}");
        assert_eq!(note[1], true);
        assert_eq!(note[2], false);
        c.close().await.unwrap();
    });
}

/// The game on the play board is kept in the page's address: a reload (or the link,
/// shared) goes on where it was.
#[test]
fn browser_a_reload_keeps_the_game_on_the_play_board() {
    let (_srv, driver, base) = serve_and_browser(&[micro_run()]);
    let game: Game = "ataxx".parse().unwrap();
    let start = game.startpos();
    runtime().block_on(async {
        let c = driver.client().await;
        open(&c, &format!("{base}/?game=ataxx&player=greedy&side=x#play")).await;
        let human = "const b = document.getElementById('play-board'); return b.dataset.busy === 'false' && b.dataset.turn === 'human' && [b.dataset.position, document.getElementById('play-moves').dataset.moves]";
        assert_eq!(wait_for(&c, human, "x to move").await[0], start.text().as_str());
        let mv = start.legal_moves().into_iter().find(|m| matches!(m.kind(), MoveKind::Clone { .. })).unwrap();
        click_move(&c, "play-board", "x", mv).await;
        let after = wait_for(&c, "const b = document.getElementById('play-board'); const m = document.getElementById('play-moves').dataset.moves; return b.dataset.busy === 'false' && b.dataset.turn === 'human' && m.split(' ').length === 2 && [b.dataset.position, m]", "greedy's reply").await;
        let url = c.current_url().await.unwrap();
        let moves = after[1].as_str().unwrap().replace(' ', ",");
        assert!(url.query().unwrap().contains(&format!("moves={}", moves.replace(',', "%2C"))), "{url}");
        c.refresh().await.unwrap();
        wait_for(&c, "return document.body.dataset.ready === 'true'", "the page again").await;
        assert_eq!(wait_for(&c, human, "the same game").await, after);
        c.close().await.unwrap();
    });
}
