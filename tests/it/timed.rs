//! Play-time search through the front ends: the UAI engine keeps its MCTS tree between
//! searches and takes `Threads`; `flipzero match --clock` gives both players one clock
//! and reports losses on time.

use crate::uai::{Session, answer, legal_at_start, move_of, run_match, script, temp, write_model};

/// The `info` line of an MCTS search (the one that counts evaluations): (simulations,
/// visits reused).
fn mcts_info(lines: &[String]) -> (u64, u64) {
    let l = lines
        .iter()
        .find(|l| l.starts_with("info ") && l.contains(" evaluations in "))
        .unwrap_or_else(|| panic!("no MCTS info line: {lines:?}"));
    let words: Vec<&str> = l.split_whitespace().collect();
    let nodes = words.iter().position(|w| *w == "nodes").expect("nodes");
    let sims = words[nodes + 1].parse().unwrap();
    let at = words
        .iter()
        .position(|w| *w == "visits")
        .unwrap_or_else(|| panic!("{l}"));
    assert_eq!(words[at + 1].trim_end_matches(','), "reused", "{l}");
    (sims, words[at - 1].parse().unwrap())
}

#[test]
fn uai_keeps_its_tree_between_searches_and_takes_threads() {
    let dir = temp("reuse");
    let model = dir.join("net");
    write_model(&model, "ataxx");
    let mut s = Session::start();
    assert_eq!(
        answer(
            &mut s,
            &format!("setoption name Model value {}", model.display())
        ),
        [] as [&str; 0]
    );
    assert_eq!(
        answer(&mut s, "setoption name Threads value 2"),
        [] as [&str; 0]
    );
    s.send("position startpos");
    s.send("go nodes 200");
    let lines = s.until("bestmove");
    assert_eq!(mcts_info(&lines), (200, 0));
    let best = move_of(&lines);
    assert!(legal_at_start("ataxx", &best), "{lines:?}");
    // The same position again: the root's 200 simulations and its own evaluation kept.
    s.send("go nodes 50");
    assert_eq!(mcts_info(&s.until("bestmove")), (50, 201));
    // After the move played, its subtree is kept.
    s.send(&format!("position startpos moves {best}"));
    s.send("go nodes 50");
    let (sims, reused) = mcts_info(&s.until("bestmove"));
    assert_eq!(sims, 50);
    assert!(reused >= 2, "the most visited move's subtree: {reused}");
    // A new game forgets the tree.
    s.send("uainewgame");
    s.send("position startpos");
    s.send("go nodes 30");
    assert_eq!(mcts_info(&s.until("bestmove")), (30, 0));
    for bad in ["0", "65", "two"] {
        let out = answer(&mut s, &format!("setoption name Threads value {bad}"));
        assert!(
            out.len() == 1 && out[0].starts_with("info string error: Threads must be"),
            "{bad}: {out:?}"
        );
    }
    s.quit();
}

/// `isready` builds the MCTS player and makes its memory ready: the search after it is
/// the one a player built at `go` makes (seeded by the position searched, not by the
/// one at `isready`), after a new game too.
#[test]
fn isready_readies_the_mcts_player_and_changes_no_search() {
    let dir = temp("ready");
    let model = dir.join("net");
    write_model(&model, "ataxx");
    let search = |ready: bool| {
        let mut s = Session::start();
        s.send(&format!("setoption name Model value {}", model.display()));
        let mut infos = Vec::new();
        for _ in 0..2 {
            if ready {
                assert_eq!(answer(&mut s, "uainewgame"), [] as [&str; 0]);
            } else {
                s.send("uainewgame");
            }
            s.send("position startpos moves f2 b2");
            s.send("go nodes 300");
            let lines = s.until("bestmove");
            let info = lines
                .iter()
                .find(|l| l.contains(" evaluations in "))
                .unwrap_or_else(|| panic!("{lines:?}"));
            // Without the timings.
            let (mut words, mut kept) = (info.split_whitespace(), Vec::new());
            while let Some(w) = words.next() {
                if w == "nps" || w == "time" {
                    words.next();
                } else {
                    kept.push(w);
                }
            }
            infos.push((kept.join(" "), lines.last().unwrap().clone()));
        }
        s.quit();
        infos
    };
    let unready = search(false);
    assert_eq!(unready[0], unready[1], "a new game searches as the first");
    assert_eq!(search(true), unready);
}

#[test]
fn a_match_clock_is_shared_and_time_losses_are_reported() {
    let dir = temp("clock");
    let pgn = dir.join("games.pgn");
    let pgn = pgn.to_str().unwrap();
    // An engine that takes 300 ms a move: on a clock of 50 ms a move it loses on time.
    let slow = script(
        "slow",
        "while read l; do case \"$l\" in uai) echo uaiok;; isready) echo readyok;; go*) sleep 0.3; echo bestmove 0000;; quit) exit 0;; esac; done",
    );
    let spec = format!("uai:{}", slow.display());
    let (ok, out) = run_match(&[
        "--a", &spec, "--b", "greedy", "--games", "2", "--clock", "time=50", "--pgn", pgn,
        "--quiet",
    ]);
    assert!(ok, "{out}");
    assert!(out.contains("clock: time=50"), "{out}");
    assert!(out.contains("time losses: A 2   B 0"), "{out}");
    assert!(
        out.lines().last().unwrap().starts_with("score 0.000 "),
        "{out}"
    );
    let games = std::fs::read_to_string(pgn).unwrap();
    assert_eq!(
        games.matches("[Termination \"time-loss by ").count(),
        2,
        "{games}"
    );

    // `ab` has no limit of its own: it needs a clock.
    let (ok, out) = run_match(&["--a", "ab", "--b", "greedy", "--games", "2"]);
    assert!(!ok && out.contains("has no limit of its own"), "{out}");
    for bad in ["tc=0", "time=0", "tc=1+x", "movetime=5"] {
        let (ok, out) = run_match(&["--a", "ab", "--b", "greedy", "--clock", bad]);
        assert!(!ok && out.contains("bad clock"), "{bad}: {out}");
    }
}
