// An NBoard front end for Egaroucid's web engine (src/web/ in
// https://github.com/Nyanyan/Egaroucid, GPL-3.0-or-later): the engine whose pattern
// evaluation and opening book are in its source, so it builds without the release's
// downloads. flipzero's Othello gauntlet (bench/othello-gauntlet.sh) plays it as
// `nboard:<this program>:depth=LEVEL`; `set depth N` selects Egaroucid's level N (1..60:
// midgame look-ahead N, an exact endgame from 2N empties at the low levels).
//
// Built by bench/egaroucid/build.sh against a checkout of Egaroucid (not vendored here).
// Options: --seed N (the book's random choice among equal moves; default 1), --no-book.
//
// Protocol (NBoard 2, the subset a match runner uses): `nboard 2`, `set depth N`,
// `set game GGF` (a board BO[...] and moves B[..]/W[..]), `move X`, `ping N` -> `pong N`,
// `go` -> `=== MOVE/eval/seconds`, `quit`; others are ignored, as the protocol asks. A bad
// game or move is reported on a `status` line and leaves the position as it was.

#include <chrono>
#include <cctype>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <cstdint>

// The web engine is written for wasm32, where uint64_t is `unsigned long long`; on
// 64-bit Linux it is `unsigned long`, and its `max(1ULL, nodes)` finds no std::max.
inline unsigned long long max(unsigned long long a, unsigned long b) { return a > b ? a : b; }

#include "web/ai.hpp"

namespace {

struct Position {
    Board board;
    bool black_to_move = true;
};

// Cell index of Egaroucid's bitboards for `D3` / `d3` (row 1 at the top); -1 if none.
int cell_of(const std::string &t) {
    if (t.size() != 2) return -1;
    int x = std::tolower(static_cast<unsigned char>(t[0])) - 'a';
    int y = t[1] - '1';
    if (x < 0 || x > 7 || y < 0 || y > 7) return -1;
    return HW2_M1 - (y * HW + x);
}

std::string name_of(int cell) {
    int y = HW_M1 - cell / HW, x = HW_M1 - cell % HW;
    std::string s;
    s += static_cast<char>('A' + x);
    s += static_cast<char>('1' + y);
    return s;
}

// Plays `t` (a cell or PA) for the side to move; false if it is not legal.
bool play(Position &p, const std::string &t) {
    uint64_t legal = p.board.get_legal();
    std::string u = t;
    for (auto &c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (u == "PA" || u == "PASS") {
        if (legal != 0ULL) return false;
        p.board.pass();
    } else {
        int cell = cell_of(t);
        if (cell < 0 || !(legal & (1ULL << cell))) return false;
        Flip flip;
        calc_flip(&flip, &p.board, cell);
        p.board.move_board(&flip);
    }
    p.black_to_move = !p.black_to_move;
    return true;
}

// The properties of a GGF game in order, NAME[value] (a `\` escapes the next character),
// between `(;` and `;)`; false (and `why`) if it is malformed.
bool ggf_properties(const std::string &g, std::vector<std::pair<std::string, std::string>> &out,
                    std::string &why) {
    size_t open = g.find("(;"), close = g.rfind(";)");
    if (open == std::string::npos || close == std::string::npos || close < open + 2) {
        why = "not a GGF game (;...;)";
        return false;
    }
    size_t k = open + 2;
    while (k < close) {
        if (std::isspace(static_cast<unsigned char>(g[k]))) { ++k; continue; }
        std::string name;
        while (k < close && std::isupper(static_cast<unsigned char>(g[k]))) name += g[k++];
        if (name.empty() || k >= close || g[k] != '[') { why = "a property without NAME[value]"; return false; }
        std::string value;
        for (++k;; ++k) {
            if (k >= close) { why = "property " + name + " without ]"; return false; }
            if (g[k] == '\\' && k + 1 < close) { value += g[++k]; continue; }
            if (g[k] == ']') { ++k; break; }
            value += g[k];
        }
        out.emplace_back(name, value);
    }
    return true;
}

// The position at the end of a GGF game (its board BO[...] and its moves B[..]/W[..]);
// false (and `why`) if it is malformed. Other properties (PB, PW, TI, C, ...) are skipped.
bool parse_ggf(const std::string &g, Position &out, std::string &why) {
    std::vector<std::pair<std::string, std::string>> props;
    if (!ggf_properties(g, props, why)) return false;
    Position p;
    bool have_board = false;
    for (const auto &[name, value] : props) {
        if (name == "BO") {
            std::istringstream bo(value);
            std::string size, cells, word;
            bo >> size;
            while (bo >> word) cells += word;
            if (size != "8" || cells.size() != 65) { why = "board is not 8, 64 cells and a side"; return false; }
            uint64_t black = 0, white = 0;
            for (int k = 0; k < 64; ++k) {
                char c = cells[k];
                uint64_t bit = 1ULL << (HW2_M1 - k);
                if (c == '*' || c == 'X' || c == 'x' || c == 'B' || c == 'b') black |= bit;
                else if (c == 'O' || c == 'o' || c == 'W' || c == 'w') white |= bit;
                else if (c != '-' && c != '.') { why = "bad cell in BO"; return false; }
            }
            char side = cells[64];
            if (side == '*' || side == 'X' || side == 'x' || side == 'B' || side == 'b') p.black_to_move = true;
            else if (side == 'O' || side == 'o' || side == 'W' || side == 'w') p.black_to_move = false;
            else { why = "bad side to move in BO"; return false; }
            p.board.translate_from_ull(p.black_to_move ? black : white, p.black_to_move ? white : black);
            have_board = true;
        } else if (name == "B" || name == "W") {
            if (!have_board) { why = "a move before the board"; return false; }
            if ((name == "B") != p.black_to_move) { why = "a move out of turn"; return false; }
            std::string mv = value.substr(0, value.find('/'));
            if (!play(p, mv)) { why = "illegal move " + mv; return false; }
        }
    }
    if (!have_board) { why = "no board BO[...]"; return false; }
    out = p;
    return true;
}

}  // namespace

int main(int argc, char **argv) {
    unsigned seed = 1;
    bool use_book = true;
    for (int a = 1; a < argc; ++a) {
        std::string s = argv[a];
        if (s == "--seed" && a + 1 < argc) seed = static_cast<unsigned>(std::strtoul(argv[++a], nullptr, 10));
        else if (s == "--no-book") use_book = false;
        else { std::cerr << "usage: " << argv[0] << " [--seed N] [--no-book]\n"; return 2; }
    }
    raw_myrandom.seed(seed);
    std::cerr.setstate(std::ios::failbit);  // the engine's own log lines
    board_init();
    mobility_init();
    stability_init();
    parent_transpose_table.first_init();
    child_transpose_table.first_init();
    evaluate_init();
    book_init();
    std::cerr.clear();
    Position pos;
    {
        std::string why;
        parse_ggf("(;BO[8 ---------------------------O*------*O--------------------------- *];)", pos, why);
    }
    int level = 5;
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string cmd;
        in >> cmd;
        if (cmd == "quit") break;
        if (cmd == "ping") {
            std::string n;
            in >> n;
            std::cout << "pong " << n << std::endl;
        } else if (cmd == "set") {
            std::string what;
            in >> what;
            if (what == "depth") {
                int d = 0;
                if (in >> d && d >= 1 && d < N_LEVEL) level = d;
                else std::cout << "status bad depth" << std::endl;
            } else if (what == "game") {
                std::string rest;
                std::getline(in, rest);
                Position p;
                std::string why;
                if (parse_ggf(rest, p, why)) pos = p;
                else std::cout << "status bad game: " << why << std::endl;
            }
        } else if (cmd == "move") {
            std::string mv;
            in >> mv;
            mv = mv.substr(0, mv.find('/'));
            Position p = pos;
            if (play(p, mv)) pos = p;
            else std::cout << "status illegal move " << mv << std::endl;
        } else if (cmd == "go") {
            auto start = std::chrono::steady_clock::now();
            std::string move = "PA";
            int value = 0;
            if (pos.board.get_legal() != 0ULL) {
                std::cerr.setstate(std::ios::failbit);
                Search_result r = ai(pos.board, level, use_book, false, false);
                std::cerr.clear();
                move = name_of(r.policy);
                value = r.value;
            }
            double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            std::cout << "=== " << move << "/" << value << "/" << secs << std::endl;
        }
    }
    return 0;
}
