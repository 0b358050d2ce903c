//! The alpha-beta search's parameters: every technique's switch and constants, the time
//! management's factors and the hand-written evaluation's weights, each an integer with
//! a range and an SPSA step. One table ([`PARAMS`]) is the source of their names,
//! defaults, ranges and descriptions: the UAI options, `ab:` player names and
//! `flipzero tune` all read it.

/// One parameter as the table describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamSpec {
    /// Its name (a UAI option, an `ab:` setting, a tuned parameter).
    pub name: &'static str,
    /// The default for the Ataxx family.
    pub default: i32,
    /// The smallest value allowed.
    pub min: i32,
    /// The largest value allowed.
    pub max: i32,
    /// A tuning's perturbation at its last iteration (SPSA's `c_end`).
    pub step: i32,
    /// What it does.
    pub doc: &'static str,
}

/// A parameter setting that cannot be made: the name and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    /// No parameter has this name.
    #[error("unknown search parameter `{}`", crate::uai::excerpt(.0))]
    Unknown(String),
    /// The value is not an integer in the parameter's range.
    #[error("search parameter `{name}` must be an integer in {min}..={max}, got `{}`", crate::uai::excerpt(.value))]
    Value {
        /// The parameter.
        name: &'static str,
        /// The value given.
        value: String,
        /// Its range.
        min: i32,
        /// See `min`.
        max: i32,
    },
}

macro_rules! params {
    ($( $(#[doc = $doc:literal])+ $field:ident: $default:expr, $min:expr, $max:expr, $step:expr; )*) => {
        /// The search's parameters (see [`PARAMS`] for each one's range and meaning).
        /// A technique whose depth parameter is 0 is off.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct Params {
            $( $(#[doc = $doc])+ pub $field: i32, )*
        }

        /// Every parameter: name, default, range, tuning step and meaning.
        pub const PARAMS: &[ParamSpec] = &[
            $( ParamSpec {
                name: stringify!($field),
                default: $default,
                min: $min,
                max: $max,
                step: $step,
                doc: concat!($($doc),+),
            }, )*
        ];

        impl Params {
            /// The defaults of the Ataxx family (tuned by matches; docs/strength.md).
            pub const TUNED: Params = Params { $( $field: $default, )* };

            /// The value of the parameter `name`.
            pub fn get(&self, name: &str) -> Option<i32> {
                match name {
                    $( stringify!($field) => Some(self.$field), )*
                    _ => None,
                }
            }

            fn slot(&mut self, name: &str) -> Option<&mut i32> {
                match name {
                    $( stringify!($field) => Some(&mut self.$field), )*
                    _ => None,
                }
            }
        }
    };
}

params! {
    /// Aspiration windows from this depth on (0: off).
    asp_depth: 0, 0, 16, 1;
    /// The aspiration window's first half-width.
    asp_delta: 40, 5, 400, 8;
    /// Percent by which a failed window widens.
    asp_growth: 200, 120, 400, 20;
    /// Reverse futility pruning up to this depth (0: off): a non-PV node whose static
    /// evaluation beats beta by the margin times the depth returns it.
    rfp_depth: 5, 0, 12, 1;
    /// Reverse futility pruning's margin per ply of depth.
    rfp_margin: 72, 10, 400, 10;
    /// Null-move pruning from this depth on (0: off).
    nmp_depth: 2, 0, 10, 1;
    /// Null-move pruning's reduction at depth 0.
    nmp_base: 2, 1, 8, 1;
    /// Null-move pruning's reduction grows by one every this many plies of depth.
    nmp_div: 5, 1, 12, 1;
    /// Null-move pruning only while at most this percent of the board is filled (the
    /// Ataxx family; the outflanking games, where zugzwang is common, never prune so).
    nmp_fill: 50, 0, 100, 5;
    /// Internal iterative reduction from this depth on (0: off): a node without a hash
    /// move is searched a ply shallower.
    iir_depth: 2, 0, 12, 1;
    /// Late move reductions from this depth on (0: off).
    lmr_depth: 3, 0, 10, 1;
    /// Moves searched in full before reductions start.
    lmr_moves: 2, 1, 12, 1;
    /// The reduction's constant, hundredths of a ply.
    lmr_base: 80, 0, 300, 10;
    /// The reduction's factor of ln(depth)·ln(move number), hundredths.
    lmr_mult: 53, 5, 200, 5;
    /// History reduces (or deepens) a move's reduction by one ply per this much (0: not).
    lmr_history: 5329, 0, 32768, 1024;
    /// Late move pruning up to this depth (0: off): quiet jumps (no piece flipped) after
    /// the first moves are not searched (the Ataxx family: other games have no jumps).
    lmp_depth: 64, 0, 64, 4;
    /// Moves searched before late move pruning, at depth 0.
    lmp_base: 1, 0, 40, 1;
    /// Added to `lmp_base` per squared ply of depth.
    lmp_mult: 1, 0, 20, 1;
    /// Futility pruning up to this depth (0: off): once the static evaluation plus the
    /// margin cannot reach alpha, the remaining moves are not searched.
    fp_depth: 9, 0, 12, 1;
    /// Futility pruning's margin at depth 0.
    fp_base: 155, 0, 600, 20;
    /// Futility pruning's margin per ply of depth.
    fp_mult: 73, 0, 400, 20;
    /// Moves searched before futility pruning.
    fp_moves: 4, 1, 20, 1;
    /// Singular extensions from this depth on (0: off).
    se_depth: 0, 0, 14, 1;
    /// A singular candidate's hash entry may be this many plies shallower than the node.
    se_tt_margin: 3, 1, 6, 1;
    /// History bonus per ply of depth of a move that cut.
    hist_bonus: 440, 10, 1000, 30;
    /// The largest history bonus.
    hist_bonus_max: 1352, 100, 4000, 100;
    /// History malus of a move tried before the one that cut, per ply (0: none).
    hist_malus: 249, 0, 1000, 30;
    /// History values stay within ± this (the bonus shrinks as a value nears it).
    hist_max: 18124, 1024, 32768, 1024;
    /// Killer moves in the move order (0: off).
    killers: 1, 0, 1, 1;
    /// Hash entries of greater depth cut too (0: only entries of exactly the node's
    /// depth, which keeps a fixed-depth search's value the minimax value).
    tt_deeper: 1, 0, 1, 1;
    /// Percent of the time manager's soft limit a search aims for.
    tm_soft: 50, 30, 300, 10;
    /// The soft limit is scaled by (base − the best move's share of the nodes) × factor,
    /// hundredths, from depth `tm_nodes_depth` on (0: not scaled).
    tm_nodes_depth: 6, 0, 20, 1;
    /// See `tm_nodes_depth`.
    tm_nodes_base: 155, 100, 250, 10;
    /// See `tm_nodes_depth`.
    tm_nodes_mult: 150, 50, 300, 10;
    /// Evaluation: empty cells a side can reach (clone or jump), per cell of difference.
    ev_mobility: 0, 0, 40, 2;
    /// Evaluation: own pieces an opponent's landing would flip, each.
    ev_exposed_own: 0, 0, 100, 4;
    /// Evaluation: enemy pieces our landing would flip, each.
    ev_exposed_opp: 0, 0, 100, 4;
    /// Evaluation: a piece's worth when the board is full (100 when it is empty); the
    /// `_mg` and `_eg` weights below are blended the same way, by the share of the
    /// board's cells that hold a piece.
    ev_material_eg: 45, 0, 400, 8;
    /// Evaluation: the side to move's bonus (Ataxx's tempo), empty board.
    ev_tempo_mg: -183, -400, 1000, 20;
    /// Evaluation: the side to move's bonus, full board.
    ev_tempo_eg: 849, -400, 1000, 20;
    /// Evaluation: a piece with no empty cell next to it (no landing can flip it), empty
    /// board.
    ev_safe_mg: -34, -100, 300, 8;
    /// Evaluation: a safe piece, full board.
    ev_safe_eg: 139, -100, 300, 8;
    /// Evaluation: a piece on a cell of class (0,0): a corner (`Geometry::classes`), empty board.
    ev_pst0_mg: -65, -400, 400, 8;
    /// Evaluation: a piece on a cell of class (0,0): a corner (`Geometry::classes`), full board.
    ev_pst0_eg: 285, -400, 400, 8;
    /// Evaluation: a piece on a cell of class (0,1) (`Geometry::classes`), empty board.
    ev_pst1_mg: -128, -400, 400, 8;
    /// Evaluation: a piece on a cell of class (0,1) (`Geometry::classes`), full board.
    ev_pst1_eg: 253, -400, 400, 8;
    /// Evaluation: a piece on a cell of class (0,2) (`Geometry::classes`), empty board.
    ev_pst2_mg: -188, -400, 400, 8;
    /// Evaluation: a piece on a cell of class (0,2) (`Geometry::classes`), full board.
    ev_pst2_eg: 289, -400, 400, 8;
    /// Evaluation: a piece on a cell of class (0,3) (`Geometry::classes`), empty board.
    ev_pst3_mg: -134, -400, 400, 8;
    /// Evaluation: a piece on a cell of class (0,3) (`Geometry::classes`), full board.
    ev_pst3_eg: 186, -400, 400, 8;
    /// Evaluation: a piece on a cell of class (1,1) (`Geometry::classes`), empty board.
    ev_pst4_mg: -138, -400, 400, 8;
    /// Evaluation: a piece on a cell of class (1,1) (`Geometry::classes`), full board.
    ev_pst4_eg: 166, -400, 400, 8;
    /// Evaluation: a piece on a cell of class (1,2) (`Geometry::classes`), empty board.
    ev_pst5_mg: -129, -400, 400, 8;
    /// Evaluation: a piece on a cell of class (1,2) (`Geometry::classes`), full board.
    ev_pst5_eg: 147, -400, 400, 8;
    /// Evaluation: a piece on a cell of class (1,3) (`Geometry::classes`), empty board.
    ev_pst6_mg: -101, -400, 400, 8;
    /// Evaluation: a piece on a cell of class (1,3) (`Geometry::classes`), full board.
    ev_pst6_eg: 97, -400, 400, 8;
    /// Evaluation: a piece on a cell of class (2,2) (`Geometry::classes`), empty board.
    ev_pst7_mg: -112, -400, 400, 8;
    /// Evaluation: a piece on a cell of class (2,2) (`Geometry::classes`), full board.
    ev_pst7_eg: 158, -400, 400, 8;
    /// Evaluation: a piece on a cell of class (2,3) (`Geometry::classes`), empty board.
    ev_pst8_mg: -115, -400, 400, 8;
    /// Evaluation: a piece on a cell of class (2,3) (`Geometry::classes`), full board.
    ev_pst8_eg: 111, -400, 400, 8;
    /// Evaluation: a piece on a cell of class (3,3): the centre (`Geometry::classes`), empty board.
    ev_pst9_mg: 0, -400, 400, 8;
    /// Evaluation: a piece on a cell of class (3,3): the centre (`Geometry::classes`), full board.
    ev_pst9_eg: 0, -400, 400, 8;
    /// Evaluation: an empty cell the side to move can reach next to 1 enemy pieces (a
    /// landing there flips them now), empty board.
    ev_target1_mg: 23, -400, 1000, 12;
    /// Evaluation: an empty cell the side to move can reach next to 1 enemy pieces (a
    /// landing there flips them now), full board.
    ev_target1_eg: -47, -400, 1000, 12;
    /// Evaluation: an empty cell the side to move can reach next to 2 enemy pieces (a
    /// landing there flips them now), empty board.
    ev_target2_mg: 23, -400, 1000, 12;
    /// Evaluation: an empty cell the side to move can reach next to 2 enemy pieces (a
    /// landing there flips them now), full board.
    ev_target2_eg: -31, -400, 1000, 12;
    /// Evaluation: an empty cell the side to move can reach next to 3 enemy pieces (a
    /// landing there flips them now), empty board.
    ev_target3_mg: 25, -400, 1000, 12;
    /// Evaluation: an empty cell the side to move can reach next to 3 enemy pieces (a
    /// landing there flips them now), full board.
    ev_target3_eg: 15, -400, 1000, 12;
    /// Evaluation: an empty cell the side to move can reach next to 4 enemy pieces (a
    /// landing there flips them now), empty board.
    ev_target4_mg: -1, -400, 1000, 12;
    /// Evaluation: an empty cell the side to move can reach next to 4 enemy pieces (a
    /// landing there flips them now), full board.
    ev_target4_eg: 105, -400, 1000, 12;
    /// Evaluation: an empty cell the side to move can reach next to 5 enemy pieces (a
    /// landing there flips them now), empty board.
    ev_target5_mg: -44, -400, 1000, 12;
    /// Evaluation: an empty cell the side to move can reach next to 5 enemy pieces (a
    /// landing there flips them now), full board.
    ev_target5_eg: 240, -400, 1000, 12;
    /// Evaluation: an empty cell the side to move can reach next to 6 enemy pieces (a
    /// landing there flips them now), empty board.
    ev_target6_mg: 3, -400, 1000, 12;
    /// Evaluation: an empty cell the side to move can reach next to 6 enemy pieces (a
    /// landing there flips them now), full board.
    ev_target6_eg: 217, -400, 1000, 12;
    /// Evaluation: an empty cell the side to move can reach next to 7 enemy pieces (a
    /// landing there flips them now), empty board.
    ev_target7_mg: -119, -400, 1000, 12;
    /// Evaluation: an empty cell the side to move can reach next to 7 enemy pieces (a
    /// landing there flips them now), full board.
    ev_target7_eg: 338, -400, 1000, 12;
    /// Evaluation: an empty cell the side to move can reach next to 8 enemy pieces (a
    /// landing there flips them now), empty board.
    ev_target8_mg: -208, -400, 1000, 12;
    /// Evaluation: an empty cell the side to move can reach next to 8 enemy pieces (a
    /// landing there flips them now), full board.
    ev_target8_eg: 579, -400, 1000, 12;
    /// Evaluation: an empty cell the opponent can reach next to 1 of our pieces (a
    /// landing there flips them), empty board.
    ev_hole1_mg: -11, -1000, 400, 12;
    /// Evaluation: an empty cell the opponent can reach next to 1 of our pieces (a
    /// landing there flips them), full board.
    ev_hole1_eg: 32, -1000, 400, 12;
    /// Evaluation: an empty cell the opponent can reach next to 2 of our pieces (a
    /// landing there flips them), empty board.
    ev_hole2_mg: -16, -1000, 400, 12;
    /// Evaluation: an empty cell the opponent can reach next to 2 of our pieces (a
    /// landing there flips them), full board.
    ev_hole2_eg: 4, -1000, 400, 12;
    /// Evaluation: an empty cell the opponent can reach next to 3 of our pieces (a
    /// landing there flips them), empty board.
    ev_hole3_mg: -49, -1000, 400, 12;
    /// Evaluation: an empty cell the opponent can reach next to 3 of our pieces (a
    /// landing there flips them), full board.
    ev_hole3_eg: -20, -1000, 400, 12;
    /// Evaluation: an empty cell the opponent can reach next to 4 of our pieces (a
    /// landing there flips them), empty board.
    ev_hole4_mg: -92, -1000, 400, 12;
    /// Evaluation: an empty cell the opponent can reach next to 4 of our pieces (a
    /// landing there flips them), full board.
    ev_hole4_eg: -65, -1000, 400, 12;
    /// Evaluation: an empty cell the opponent can reach next to 5 of our pieces (a
    /// landing there flips them), empty board.
    ev_hole5_mg: -177, -1000, 400, 12;
    /// Evaluation: an empty cell the opponent can reach next to 5 of our pieces (a
    /// landing there flips them), full board.
    ev_hole5_eg: -63, -1000, 400, 12;
    /// Evaluation: an empty cell the opponent can reach next to 6 of our pieces (a
    /// landing there flips them), empty board.
    ev_hole6_mg: -248, -1000, 400, 12;
    /// Evaluation: an empty cell the opponent can reach next to 6 of our pieces (a
    /// landing there flips them), full board.
    ev_hole6_eg: -80, -1000, 400, 12;
    /// Evaluation: an empty cell the opponent can reach next to 7 of our pieces (a
    /// landing there flips them), empty board.
    ev_hole7_mg: 100, -1000, 400, 12;
    /// Evaluation: an empty cell the opponent can reach next to 7 of our pieces (a
    /// landing there flips them), full board.
    ev_hole7_eg: -285, -1000, 400, 12;
    /// Evaluation: an empty cell the opponent can reach next to 8 of our pieces (a
    /// landing there flips them), empty board.
    ev_hole8_mg: 84, -1000, 400, 12;
    /// Evaluation: an empty cell the opponent can reach next to 8 of our pieces (a
    /// landing there flips them), full board.
    ev_hole8_eg: -82, -1000, 400, 12;
}

impl Default for Params {
    fn default() -> Params {
        Params::TUNED
    }
}

impl Params {
    /// The full-width search: no pruning, reduction, extension or aspiration window, hash
    /// entries that cut only at their own depth, and the original evaluation's weights. A
    /// fixed-depth search returns the minimax value, and a search to the end proves
    /// results: the exact endgame, the bootstrap evaluator and the depth ladder
    /// (`ab1`…`ab64`, a yardstick whose strength stays fixed) use it.
    pub const FULL_WIDTH: Params = Params {
        asp_depth: 0,
        rfp_depth: 0,
        nmp_depth: 0,
        iir_depth: 0,
        lmr_depth: 0,
        lmp_depth: 0,
        fp_depth: 0,
        se_depth: 0,
        tt_deeper: 0,
        ..Params::ORIGINAL_EVAL
    };

    /// The tuned search with the original evaluation: material, mobility, exposure.
    pub const ORIGINAL_EVAL: Params = Params {
        ev_mobility: 4,
        ev_exposed_own: 15,
        ev_exposed_opp: 10,
        ev_material_eg: 100,
        ev_tempo_mg: 0,
        ev_tempo_eg: 0,
        ev_safe_mg: 0,
        ev_safe_eg: 0,
        ev_pst0_mg: 0,
        ev_pst0_eg: 0,
        ev_pst1_mg: 0,
        ev_pst1_eg: 0,
        ev_pst2_mg: 0,
        ev_pst2_eg: 0,
        ev_pst3_mg: 0,
        ev_pst3_eg: 0,
        ev_pst4_mg: 0,
        ev_pst4_eg: 0,
        ev_pst5_mg: 0,
        ev_pst5_eg: 0,
        ev_pst6_mg: 0,
        ev_pst6_eg: 0,
        ev_pst7_mg: 0,
        ev_pst7_eg: 0,
        ev_pst8_mg: 0,
        ev_pst8_eg: 0,
        ev_pst9_mg: 0,
        ev_pst9_eg: 0,
        ev_hole1_mg: 0,
        ev_hole1_eg: 0,
        ev_hole2_mg: 0,
        ev_hole2_eg: 0,
        ev_hole3_mg: 0,
        ev_hole3_eg: 0,
        ev_hole4_mg: 0,
        ev_hole4_eg: 0,
        ev_hole5_mg: 0,
        ev_hole5_eg: 0,
        ev_hole6_mg: 0,
        ev_hole6_eg: 0,
        ev_hole7_mg: 0,
        ev_hole7_eg: 0,
        ev_hole8_mg: 0,
        ev_hole8_eg: 0,
        ev_target1_mg: 0,
        ev_target1_eg: 0,
        ev_target2_mg: 0,
        ev_target2_eg: 0,
        ev_target3_mg: 0,
        ev_target3_eg: 0,
        ev_target4_mg: 0,
        ev_target4_eg: 0,
        ev_target5_mg: 0,
        ev_target5_eg: 0,
        ev_target6_mg: 0,
        ev_target6_eg: 0,
        ev_target7_mg: 0,
        ev_target7_eg: 0,
        ev_target8_mg: 0,
        ev_target8_eg: 0,
        ..Params::TUNED
    };

    /// Sets `name` to `value` (an integer in the parameter's range).
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), ParamError> {
        let spec = spec(name).ok_or_else(|| ParamError::Unknown(name.to_string()))?;
        let v = value
            .trim()
            .parse::<i32>()
            .ok()
            .filter(|v| (spec.min..=spec.max).contains(v))
            .ok_or_else(|| ParamError::Value {
                name: spec.name,
                value: value.to_string(),
                min: spec.min,
                max: spec.max,
            })?;
        *self.slot(spec.name).expect("a parameter of the table") = v;
        Ok(())
    }

    /// The parameters that differ from `base`, as `(name, value)` in the table's order.
    pub fn diff(&self, base: &Params) -> Vec<(&'static str, i32)> {
        PARAMS
            .iter()
            .filter_map(|p| {
                let v = self.get(p.name)?;
                (Some(v) != base.get(p.name)).then_some((p.name, v))
            })
            .collect()
    }
}

/// The table entry of parameter `name` (names are matched exactly, then ignoring case,
/// as UAI option names are).
pub fn spec(name: &str) -> Option<&'static ParamSpec> {
    PARAMS
        .iter()
        .find(|p| p.name == name)
        .or_else(|| PARAMS.iter().find(|p| p.name.eq_ignore_ascii_case(name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_lie_in_their_ranges_and_names_are_unique() {
        for (i, p) in PARAMS.iter().enumerate() {
            assert!((p.min..=p.max).contains(&p.default), "{}", p.name);
            assert!(p.step > 0 && p.step <= p.max - p.min, "{}", p.name);
            assert!(!p.doc.is_empty(), "{}", p.name);
            assert!(PARAMS[..i].iter().all(|q| q.name != p.name), "{}", p.name);
        }
        for (name, v) in Params::FULL_WIDTH.diff(&Params::TUNED) {
            let p = spec(name).unwrap();
            assert!((p.min..=p.max).contains(&v), "{name}");
        }
    }

    #[test]
    fn set_checks_name_and_range_and_diff_lists_changes() {
        let mut p = Params::TUNED;
        p.set("rfp_margin", "120").unwrap();
        p.set("LMR_BASE", " 50").unwrap();
        assert_eq!(
            p.diff(&Params::TUNED),
            [("rfp_margin", 120), ("lmr_base", 50)]
        );
        assert_eq!(
            p.set("rfp_margin", "5").unwrap_err().to_string(),
            "search parameter `rfp_margin` must be an integer in 10..=400, got `5`"
        );
        assert!(matches!(p.set("nope", "1"), Err(ParamError::Unknown(_))));
        assert!(p.set("killers", "x").is_err());
        assert_eq!(p.get("rfp_margin"), Some(120));
    }
}
