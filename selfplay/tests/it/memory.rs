//! A play-time search's memory kept between trees and made ready before one: the same
//! searches, and no page faults for a tree that fits it.

use std::sync::atomic::AtomicBool;

use engine::{Game, Move, State};
use selfplay::{
    Evaluator, HashRandom, MctsConfig, PlayLimits, PlayMemory, PlaySearch, PlayStats, TreePlayer,
};

fn sims(n: u32) -> PlayLimits {
    PlayLimits {
        sims: Some(n),
        time: None,
    }
}

/// What a search did that its memory could change: the visits, the tree, the
/// evaluations made and found in the cache.
type Trace = (Vec<u32>, usize, u64, u64);

/// One thread, one leaf a batch (the play-time search, whose positions keep tails).
fn search_in(memory: PlayMemory, root: State, n: u32) -> (Trace, PlaySearch) {
    let mut search = PlaySearch::in_memory(root, MctsConfig::for_play(), 1, 7, memory);
    let mut evs: Vec<Box<dyn Evaluator>> = vec![Box::new(HashRandom)];
    let (out, st) = search
        .run(&mut evs, sims(n), &AtomicBool::new(false))
        .unwrap();
    let trace = (
        out.visits,
        search.tree().tree_size(),
        st.evaluations,
        st.cache_hits,
    );
    (trace, search)
}

/// The minor page faults of the calling thread so far (Linux's per-thread count).
#[cfg(target_os = "linux")]
fn thread_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    // The fields after the command's closing parenthesis: state is the 3rd field, minflt
    // the 10th.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    rest.split(' ').nth(7).unwrap().parse().unwrap()
}

/// A search in memory made ready, and one in the memory a search left, is the search in
/// new memory: the same visits and tree, the same evaluations (the kept cache emptied:
/// a kept one would answer some of them).
#[test]
fn kept_and_prepared_memory_change_no_search() {
    for game in ["ataxx", "othello"] {
        let root = game.parse::<Game>().unwrap().startpos();
        let (fresh, _) = search_in(PlayMemory::new(), root, 3000);
        assert!(fresh.3 > 0, "{game}: transpositions hit the cache");
        let mut ready = PlayMemory::new();
        ready.prepare(4 << 20, true);
        let bytes = ready.tree_bytes();
        assert!(
            ((4 << 20) - 64..=4 << 20).contains(&bytes),
            "{game}: {bytes} bytes made ready"
        );
        let (prepared, search) = search_in(ready, root, 3000);
        assert_eq!(prepared, fresh, "{game}: in prepared memory");
        let kept = search.into_memory();
        assert!(kept.tree_bytes() >= bytes, "{game}: the buffers are kept");
        let (again, _) = search_in(kept, root, 3000);
        assert_eq!(again, fresh, "{game}: in kept memory");
    }
}

/// A tree that fits the memory made ready faults no page in: its buffers were written
/// before. (A search in new memory faults them in as they grow, 1,525 faults for this
/// tree of 3.5 MB alone, but may also be given memory another test freed: not compared
/// here.) The memory is larger than the allocator keeps in its heap (32 MiB), so that it
/// comes fresh from the kernel, and a `prepare` that did not write it would leave every
/// page of it to the search.
#[cfg(target_os = "linux")]
#[test]
fn a_search_in_prepared_memory_faults_no_tree_page_in() {
    let root = "ataxx".parse::<Game>().unwrap().startpos();
    let mut ready = PlayMemory::new();
    ready.prepare(128 << 20, true);
    let mut search = PlaySearch::in_memory(root, MctsConfig::for_play(), 1, 7, ready);
    // No cache: its policies' buffers are allocated as it fills.
    search.set_cache(0);
    let mut evs: Vec<Box<dyn Evaluator>> = vec![Box::new(HashRandom)];
    let start = thread_faults();
    search
        .run(&mut evs, sims(20_000), &AtomicBool::new(false))
        .unwrap();
    let faults = thread_faults() - start;
    let tree = search.tree().tree_bytes();
    assert!(tree > 3 << 20, "a tree of {tree} bytes");
    assert!(faults <= 16, "{faults} faults for a tree of {tree} bytes");
}

/// A player's memory goes from game to game: a new game's search is the first game's.
#[test]
fn a_new_game_searches_as_the_first() {
    let root = "ataxx".parse::<Game>().unwrap().startpos();
    let mut player = TreePlayer::new(MctsConfig::for_play(), 1, 3);
    let mut evs: Vec<Box<dyn Evaluator>> = vec![Box::new(HashRandom)];
    let stop = AtomicBool::new(false);
    let mut game = |player: &mut TreePlayer| -> Vec<(Move, PlayStats)> {
        let mut s = root;
        (0..4)
            .map(|_| {
                let mv = player.choose(&mut evs, &s, sims(2000), &stop).unwrap();
                s.play(mv);
                s.play(s.legal_moves()[0]);
                (mv, player.last_stats().unwrap())
            })
            .collect()
    };
    let strip = |g: Vec<(Move, PlayStats)>| -> Vec<(Move, u64, u64, u32)> {
        g.into_iter()
            .map(|(m, s)| (m, s.evaluations, s.cache_hits, s.reused_visits))
            .collect()
    };
    player.prepare(1);
    let first = strip(game(&mut player));
    player.new_game();
    player.prepare(1);
    let second = strip(game(&mut player));
    assert_eq!(first, second);
    assert!(
        first.iter().any(|g| g.3 > 0),
        "the tree is kept within a game"
    );
}
