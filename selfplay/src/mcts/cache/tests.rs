//! The evaluation cache's tests.

use engine::Move;

use super::*;

#[test]
fn a_value_alone_does_not_replace_a_whole_evaluation() {
    let s = "ataxx".parse::<engine::Game>().unwrap().startpos();
    let whole = Evaluation {
        policy: vec![0.5, 0.5],
        value: 0.25,
        wdl: None,
        score: None,
    };
    let value = Evaluation {
        policy: vec![],
        value: 0.25,
        ..whole.clone()
    };
    let mut cache = EvalCache::new(16);
    let get = |cache: &mut EvalCache, s: &State, value_only: bool| {
        let mut out = Evaluation {
            policy: vec![9.0; 5],
            value: 9.0,
            wdl: Some([9.0; 3]),
            score: Some(9.0),
        };
        cache.get_into(s, value_only, 2, &mut out).then_some(out)
    };
    cache.put(s, &value);
    assert_eq!(get(&mut cache, &s, true), Some(value.clone()));
    assert_eq!(get(&mut cache, &s, false), None, "a value has no policy");
    cache.put(s, &whole);
    assert_eq!(
        get(&mut cache, &s, false),
        Some(whole.clone()),
        "a whole one replaces a value"
    );
    cache.put(s, &value);
    assert_eq!(
        get(&mut cache, &s, false),
        Some(whole),
        "a value keeps the whole one"
    );
    // Asked for its value alone, the cache gives the whole one's value, no policy.
    assert_eq!(get(&mut cache, &s, true), Some(value));
    let other = s.after(s.legal_moves()[0]);
    assert_eq!(get(&mut cache, &other, true), None);
    assert_eq!(cache.counts(), (6, 5));
}

/// Positions that share a slot replace each other, and neither is taken for the
/// other: a one-slot cache holds every position in the same slot.
#[test]
fn a_slot_answers_only_for_the_position_it_holds() {
    let s = "ataxx".parse::<engine::Game>().unwrap().startpos();
    let other = s.after(s.legal_moves()[0]);
    let eval = |value: f32| Evaluation {
        policy: vec![],
        value,
        wdl: None,
        score: None,
    };
    let mut cache = EvalCache::new(1);
    let mut out = eval(9.0);
    cache.put(s, &eval(0.5));
    assert!(!cache.get_into(&other, true, 0, &mut out));
    assert!(cache.get_into(&s, true, 0, &mut out));
    assert_eq!(out.value, 0.5);
    cache.put(other, &eval(-0.5));
    assert!(!cache.get_into(&s, true, 0, &mut out), "replaced");
    assert!(cache.get_into(&other, true, 0, &mut out));
    assert_eq!(out.value, -0.5);
    assert_eq!(cache.counts(), (4, 2));
    // A cache of no slots holds nothing and counts no lookup.
    let mut none = EvalCache::new(0);
    none.put(s, &eval(0.5));
    assert!(!none.get_into(&s, true, 0, &mut out));
    assert_eq!(none.counts(), (0, 0));
}

/// A slot given for an evaluation made in place answers as a lookup would (whole,
/// its value alone, nothing), is made as the lookup says (the policy alone where the
/// value is held, the whole evaluation otherwise) and holds the request's position
/// from then on, nothing of another position's; what is made there is found by the
/// next lookups.
#[test]
fn a_slot_for_an_evaluation_in_place_answers_as_a_lookup() {
    let s = "ataxx".parse::<engine::Game>().unwrap().startpos();
    let moves = s.legal_moves();
    let other = s.after(moves[0]);
    let request = |p: State, value_only: bool| LeafRequest {
        state: p,
        moves: p.legal_moves(),
        position: p,
        value_only,
    };
    let eval = |policy: Vec<f32>, value: f32| Evaluation {
        policy,
        value,
        wdl: None,
        score: None,
    };
    let uniform = vec![1.0 / moves.len() as f32; moves.len()];
    let mut cache = EvalCache::new(1);
    cache.put(other, &eval(vec![], 0.75));
    // Another position held: a miss, made whole, and the slot is the request's.
    let mut asked = Vec::new();
    let e = cache.answer_in_place(&request(s, false), true, |lookup, e| {
        asked.push(lookup);
        *e = eval(uniform.clone(), 0.25);
    });
    assert_eq!(e, Some(&uniform[..]));
    assert_eq!(asked, [Lookup::Miss]);
    let mut out = eval(vec![], 9.0);
    assert!(!cache.get_into(&other, true, 0, &mut out), "replaced");
    assert!(cache.get_into(&s, false, moves.len(), &mut out));
    assert_eq!(out, eval(uniform.clone(), 0.25));
    // The whole evaluation held: answered as it is, nothing made; its value too.
    let e = cache.answer_in_place(&request(s, false), true, |_, _| panic!("made"));
    assert_eq!(e, Some(&uniform[..]));
    let v = cache.value_in_place(&s, |_| panic!("made"));
    assert_eq!(v, Some(0.25));
    // A value alone held: its policy is made where the evaluator gives one alone (the
    // value kept), the whole evaluation otherwise.
    cache.put(other, &eval(vec![], -0.5));
    let r = request(other, false);
    let e = cache.answer_in_place(&r, true, |lookup, e| {
        assert_eq!((lookup, e.value), (Lookup::PolicyAlone, -0.5));
        e.policy = vec![0.5; r.moves.len()];
    });
    assert_eq!(e, Some(&vec![0.5; r.moves.len()][..]));
    assert!(cache.get_into(&other, false, r.moves.len(), &mut out));
    assert_eq!(out.value, -0.5);
    // (A value alone does not replace the whole evaluation of its position: another
    // position in between.)
    cache.put(s, &eval(vec![], 0.0));
    cache.put(other, &eval(vec![], -0.5));
    let e = cache.answer_in_place(&r, false, |lookup, e| {
        assert_eq!(lookup, Lookup::Miss);
        *e = eval(vec![0.25; r.moves.len()], 0.125);
    });
    assert_eq!(e, Some(&vec![0.25; r.moves.len()][..]));
    assert_eq!(
        cache.value_in_place(&other, |_| panic!("made")),
        Some(0.125)
    );
    // A value made in place replaces another position's, and is found.
    let v = cache.value_in_place(&s, |e| *e = eval(vec![], -0.25));
    assert_eq!(v, Some(-0.25));
    assert!(!cache.get_into(&other, true, 0, &mut out), "replaced");
    assert!(cache.get_into(&s, true, 0, &mut out));
    assert_eq!(out.value, -0.25);
    // Counted as lookups: the position found in all but four (the first, the two of
    // a position replaced, and the value made in place).
    assert_eq!(cache.counts(), (12, 8));
    assert!(
        EvalCache::new(0)
            .answer_in_place(&r, true, |_, _| {})
            .is_none()
    );
    assert!(EvalCache::new(0).value_in_place(&s, |_| {}).is_none());
}

/// A position at another half-move clock (which an evaluator may read) is another
/// position; one of another game empties the cache when a search starts in it.
#[test]
fn the_clock_and_the_game_tell_positions_apart() {
    let ataxx: engine::Game = "ataxx".parse().unwrap();
    let s = ataxx.startpos();
    let State::Ataxx(start) = s else {
        unreachable!("an Ataxx position")
    };
    let fen = start.fen().replacen(" 0 ", " 7 ", 1);
    let later = State::Ataxx(engine::Position::from_fen(&fen, start.rules()).unwrap());
    assert_eq!(later.hash(), s.hash());
    assert_ne!(later, s);
    let value = |v: f32| Evaluation {
        policy: vec![],
        value: v,
        wdl: None,
        score: None,
    };
    let mut cache = EvalCache::new(1 << 10);
    cache.put(s, &value(0.5));
    let mut out = value(9.0);
    assert!(!cache.get_into(&later, true, 0, &mut out));
    cache.put(later, &value(0.25));
    assert!(cache.get_into(&later, true, 0, &mut out));
    assert_eq!(out.value, 0.25);
    cache.keep_for(ataxx);
    assert!(cache.get_into(&later, true, 0, &mut out), "the same game");
    let misere: engine::Game = "ataxx/misere".parse().unwrap();
    let mirror = misere.startpos();
    // The same board and clock: the same key, found but for the game's change.
    assert_eq!(key(&mirror), key(&s));
    cache.put(s, &value(0.5));
    assert!(cache.get_into(&mirror, true, 0, &mut out));
    cache.keep_for(misere);
    assert!(!cache.get_into(&mirror, true, 0, &mut out), "emptied");
}

/// A slot gives back the policy it holds whatever its length: in the slot's priors up to
/// [`INLINE`] moves, in its own buffer past them, one after the other in the same slot
/// (a one-slot cache), so that a shorter policy never reads the longer one's priors and
/// a longer one never reads a stale buffer; with its W/D/L and score. Also in a cache
/// with no table (off Linux), where every policy has its buffer.
#[test]
fn a_slot_holds_policies_of_every_length() {
    for inline in [64, 0] {
        policies_of_every_length(inline);
    }
}

fn policies_of_every_length(inline: usize) {
    let s = "ataxx".parse::<engine::Game>().unwrap().startpos();
    let other = s.after(s.legal_moves()[0]);
    let eval = |n: usize, seed: f32| Evaluation {
        policy: (0..n).map(|k| seed + k as f32).collect(),
        value: seed / 1000.0,
        wdl: Some([seed, 0.0, 1.0]),
        score: Some(-seed),
    };
    let mut cache = EvalCache::with_inline(1, inline);
    let mut out = Evaluation::default();
    let lengths = [
        3,
        INLINE + 36,
        INLINE,
        INLINE + 1,
        1,
        INLINE + 1,
        2 * INLINE,
        2,
        5,
    ];
    for (k, &n) in lengths.iter().enumerate() {
        let p = if k % 2 == 0 { s } else { other };
        let e = eval(n, k as f32 * 7.0);
        cache.put(p, &e);
        assert!(cache.get_into(&p, false, n, &mut out), "length {n}");
        assert_eq!(out, e, "length {n}");
        // Made in place: the same, read where it was stored.
        let (m, q) = (n + 1, if k % 2 == 0 { other } else { s });
        let made = eval(m, k as f32 * 11.0);
        let request = LeafRequest {
            state: q,
            position: q,
            moves: vec![Move::PASS; m],
            value_only: false,
        };
        let got = cache.answer_in_place(&request, false, |lookup, e| {
            assert_eq!(lookup, Lookup::Miss);
            *e = made.clone();
        });
        assert_eq!(got, Some(&made.policy[..]), "length {m}");
        assert!(cache.get_into(&q, false, m, &mut out));
        assert_eq!(out, made, "length {m}");
        // Made ready (the table written anew) between two searches: what it held kept.
        if k == 0 {
            cache.prepare();
            assert!(cache.get_into(&q, false, m, &mut out));
            assert_eq!(out, made, "length {m}, the table written");
        }
    }
}

/// A slot's W/D/L and score belong to the evaluation it holds: one without them (a fast
/// net's, which never writes the slot's extras) that replaces one with them gives none
/// back, not the stale ones; one with them after it gives its own; and a policy made
/// alone for a held value keeps the value's W/D/L and score.
#[test]
fn a_slot_gives_the_wdl_and_score_of_the_evaluation_it_holds() {
    let s = "ataxx".parse::<engine::Game>().unwrap().startpos();
    let other = s.after(s.legal_moves()[0]);
    let with = |v: f32| Evaluation {
        policy: vec![0.5, 0.5],
        value: v,
        wdl: Some([v, 0.0, 1.0 - v]),
        score: Some(-v),
    };
    let without = Evaluation {
        policy: vec![0.25, 0.75],
        value: 0.5,
        wdl: None,
        score: None,
    };
    let mut cache = EvalCache::new(1);
    let mut out = Evaluation::default();
    cache.put(s, &with(0.125));
    assert!(cache.get_into(&s, false, 2, &mut out));
    assert_eq!(out, with(0.125));
    cache.put(other, &without);
    assert!(cache.get_into(&other, false, 2, &mut out));
    assert_eq!(
        out, without,
        "no W/D/L or score left from the slot's last position"
    );
    assert!(cache.get_into(&other, true, 0, &mut out));
    assert_eq!((out.wdl, out.score), (None, None));
    cache.put(s, &with(0.75));
    assert!(cache.get_into(&s, true, 0, &mut out));
    assert_eq!(
        (out.value, out.wdl, out.score),
        (0.75, with(0.75).wdl, Some(-0.75))
    );
    // A value alone held; its policy made alone keeps the value's W/D/L and score.
    cache.put(
        other,
        &Evaluation {
            policy: vec![],
            ..with(0.25)
        },
    );
    let request = LeafRequest {
        state: other,
        position: other,
        moves: vec![Move::PASS; 2],
        value_only: false,
    };
    let got = cache.answer_in_place(&request, true, |lookup, e| {
        assert_eq!(lookup, Lookup::PolicyAlone);
        assert_eq!(
            (e.value, e.wdl, e.score),
            (0.25, with(0.25).wdl, Some(-0.25))
        );
        e.policy = vec![0.5, 0.5];
    });
    assert_eq!(got, Some(&[0.5, 0.5][..]));
    assert!(cache.get_into(&other, false, 2, &mut out));
    assert_eq!(out, with(0.25));
}
