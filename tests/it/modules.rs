//! No module import circles in any crate of the workspace (an invariant of
//! ARCHITECTURE.md): within each crate (every library, binary and test target), the
//! modules that import one another form no cycle.
//!
//! Run it alone, with the graph summary of every crate:
//! `cargo test --profile tests --test it modules -- --nocapture`.
//!
//! The check reads the sources, not the compiler's view: it finds each crate's module
//! tree from `mod` declarations (files and inline modules), and an edge `a → b` wherever
//! module `a` names a path into module `b`: in a `use` (trees expanded, `self`, `super`
//! and `crate` resolved) or in an expression (`super::f()`, `crate::x::Y`, `child::g()`).
//! A name imported through the crate root's re-exports (`crate::Name`, where the root
//! says `pub use a::b::Name`) counts as an import of the module that defines it, and the
//! root's `pub use` lines themselves are its public face, not imports of its own. Inline
//! modules (`mod tests { use super::*; }`) are modules of their own. Comments, strings
//! and doc links are not read.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Circles that are known and left for another change to remove, by crate and by their
/// modules. A circle not listed fails the test; a listed one that is gone (or changed)
/// fails it too, so that this list only shrinks.
const KNOWN: &[(&str, &[&str])] = &[];

#[test]
fn no_module_import_circles_in_any_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut report = String::new();
    let mut failures = vec![];
    let mut seen_known = BTreeSet::new();
    for (name, file) in crate_roots(root) {
        let graph = Graph::read(&file);
        let circles = graph.circles();
        report += &format!(
            "{name}: {} modules, {} imports, {} circles\n",
            graph.modules.len(),
            graph.edge_count(),
            circles.len()
        );
        for circle in circles {
            let members: BTreeSet<String> = circle.iter().map(|&m| graph.name(m)).collect();
            let known = KNOWN.iter().position(|(c, ms)| {
                *c == name && ms.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>() == members
            });
            let text = graph.describe(&circle, root);
            report += &text;
            match known {
                Some(k) => {
                    seen_known.insert(k);
                }
                None => failures.push(format!("{name}: a module import circle\n{text}")),
            }
        }
    }
    for (k, (name, members)) in KNOWN.iter().enumerate() {
        if !seen_known.contains(&k) {
            failures.push(format!(
                "{name}: the known circle {members:?} is gone (or changed): update KNOWN"
            ));
        }
    }
    println!("{report}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A circle fails the check, whichever way it closes; a one-way import does not.
#[test]
fn the_checker_finds_circles() {
    let dir = rundir::Scratch::temp("modules", "");
    std::fs::create_dir_all(dir.join("p")).unwrap();
    let write = |f: &str, text: &str| std::fs::write(dir.join(f), text).unwrap();
    write(
        "lib.rs",
        "mod a;\nmod b;\nmod c;\nmod p;\npub use c::Thing;\n/// crate::b::X in a comment\nfn f() {}\n",
    );
    write(
        "a.rs",
        "use crate::b::{self, X};\nfn g() { let s = \"crate::c\"; }\n",
    );
    write("b.rs", "pub struct X;\nfn h() { crate::a::g(); }\n");
    write(
        "c.rs",
        "pub struct Thing;\nmod tests {\n    use super::*;\n    use crate::a::g;\n}\n",
    );
    write("p/mod.rs", "mod q;\npub trait T {}\n");
    write("p/q.rs", "use super::T;\nfn k() { crate::Thing; }\n");
    let graph = Graph::read(&dir.join("lib.rs"));
    let circles = graph.circles();
    let names: Vec<BTreeSet<String>> = circles
        .iter()
        .map(|c| c.iter().map(|&m| graph.name(m)).collect())
        .collect();
    assert_eq!(
        names,
        [BTreeSet::from(["a".to_string(), "b".to_string()])],
        "{}",
        graph.describe(&circles[0], &dir)
    );
    // p::q imports its parent, crate::Thing is c's (through the root's re-export), and
    // neither closes a circle.
    let q = graph.find("p::q");
    let targets: BTreeSet<String> = graph.edges[q].keys().map(|&t| graph.name(t)).collect();
    assert_eq!(targets, BTreeSet::from(["p".to_string(), "c".to_string()]));
}

/// Every crate of the workspace: (name, root file).
fn crate_roots(root: &Path) -> Vec<(String, PathBuf)> {
    let mut packages = vec![root.to_path_buf()];
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file() && !p.ends_with("target"))
        .collect();
    dirs.sort();
    packages.extend(dirs);
    let mut out = vec![];
    for p in packages {
        let pkg = if p == root {
            "flipzero".to_string()
        } else {
            p.file_name().unwrap().to_string_lossy().into_owned()
        };
        for (kind, file) in [("lib", "src/lib.rs"), ("bin", "src/main.rs")] {
            if p.join(file).is_file() {
                out.push((format!("{pkg} ({kind})"), p.join(file)));
            }
        }
        for (kind, dir) in [
            ("bin", "src/bin"),
            ("test", "tests"),
            ("bench", "benches"),
            ("example", "examples"),
        ] {
            let Ok(entries) = std::fs::read_dir(p.join(dir)) else {
                continue;
            };
            let mut entries: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
            entries.sort();
            for e in entries {
                let stem = e.file_stem().unwrap().to_string_lossy().into_owned();
                if e.extension().is_some_and(|x| x == "rs") {
                    out.push((format!("{pkg} ({kind} {stem})"), e));
                } else if e.join("main.rs").is_file() {
                    out.push((format!("{pkg} ({kind} {stem})"), e.join("main.rs")));
                }
            }
        }
    }
    out
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Ident(String),
    /// `::`
    Sep,
    Punct(char),
}

/// The tokens of Rust source that matter to paths, each with its line; comments,
/// strings, characters, numbers and lifetimes are left out.
fn tokens(src: &str) -> Vec<(Token, usize)> {
    let c: Vec<char> = src.chars().collect();
    let mut out = vec![];
    let (mut i, mut line) = (0, 1);
    let ident_start = |ch: char| ch.is_alphabetic() || ch == '_';
    let ident_char = |ch: char| ch.is_alphanumeric() || ch == '_';
    // Skips a string body from its opening quote at `i` (escapes honoured).
    let skip_string = |i: &mut usize, line: &mut usize| {
        *i += 1;
        while *i < c.len() && c[*i] != '"' {
            if c[*i] == '\\' {
                *i += 1;
            }
            if *i < c.len() && c[*i] == '\n' {
                *line += 1;
            }
            *i += 1;
        }
        *i += 1;
    };
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied().unwrap_or('\0');
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && next == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && next == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if c[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if ch == '"' {
            skip_string(&mut i, &mut line);
        } else if ident_start(ch) {
            let start = i;
            while i < c.len() && ident_char(c[i]) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let at = c.get(i).copied().unwrap_or('\0');
            let prefix = matches!(word.as_str(), "r" | "b" | "br" | "c" | "cr");
            if prefix && (at == '#' || at == '"') && word.contains('r') {
                // A raw string: r"…", r#"…"#, br##"…"##.
                let mut hashes = 0;
                while c.get(i) == Some(&'#') {
                    hashes += 1;
                    i += 1;
                }
                if c.get(i) != Some(&'"') {
                    // `r#ident`: a raw identifier.
                    let start = i;
                    while i < c.len() && ident_char(c[i]) {
                        i += 1;
                    }
                    out.push((Token::Ident(c[start..i].iter().collect()), line));
                    continue;
                }
                i += 1;
                loop {
                    if i >= c.len() {
                        break;
                    }
                    if c[i] == '"' && (0..hashes).all(|k| c.get(i + 1 + k) == Some(&'#')) {
                        i += 1 + hashes;
                        break;
                    }
                    if c[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            } else if prefix && at == '"' {
                skip_string(&mut i, &mut line);
            } else if word == "b" && at == '\'' {
                // A byte literal: b'x', b'\n'.
                i += 1;
                while i < c.len() && c[i] != '\'' {
                    if c[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
            } else {
                out.push((Token::Ident(word), line));
            }
        } else if ch.is_ascii_digit() {
            while i < c.len() && ident_char(c[i]) {
                i += 1;
            }
        } else if ch == '\'' {
            if next == '\\' {
                // An escaped character: '\n', '\'', '\u{1F600}'.
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                // A lifetime or a label.
                i += 1;
                while i < c.len() && ident_char(c[i]) {
                    i += 1;
                }
            }
        } else if ch == ':' && next == ':' {
            out.push((Token::Sep, line));
            i += 2;
        } else {
            out.push((Token::Punct(ch), line));
            i += 1;
        }
    }
    out
}

/// A path named in a module: its segments, the line, and how it is named.
struct Named {
    segments: Vec<String>,
    line: usize,
    /// In a `use` (not an expression).
    used: bool,
    /// In a `pub use` (any `pub`).
    public: bool,
}

struct Module {
    /// Names from the crate root down.
    path: Vec<String>,
    file: PathBuf,
    parent: Option<usize>,
    children: BTreeMap<String, usize>,
    named: Vec<Named>,
}

struct Graph {
    modules: Vec<Module>,
    /// For each module, the modules it imports, with the file and line of the first
    /// import.
    edges: Vec<BTreeMap<usize, (PathBuf, usize)>>,
}

impl Graph {
    /// The module tree of the crate whose root file is `root`, and its imports.
    fn read(root: &Path) -> Graph {
        let mut g = Graph {
            modules: vec![],
            edges: vec![],
        };
        let dir = root.parent().unwrap().to_path_buf();
        g.read_file(root, dir, vec![], None);
        g.edges = (0..g.modules.len()).map(|m| g.imports(m)).collect();
        g
    }

    fn new_module(&mut self, path: Vec<String>, file: &Path, parent: Option<usize>) -> usize {
        let id = self.modules.len();
        if let Some(p) = parent {
            let name = path.last().unwrap().clone();
            self.modules[p].children.insert(name, id);
        }
        self.modules.push(Module {
            path,
            file: file.to_path_buf(),
            parent,
            children: BTreeMap::new(),
            named: vec![],
        });
        id
    }

    /// Reads `file` as module `path` (a child of `parent`); its child modules' files are
    /// under `dir`.
    fn read_file(&mut self, file: &Path, dir: PathBuf, path: Vec<String>, parent: Option<usize>) {
        let src = std::fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        let toks = tokens(&src);
        let top = self.new_module(path, file, parent);
        // Open inline modules: (module, its directory, the brace depth inside it).
        let mut stack: Vec<(usize, PathBuf, usize)> = vec![(top, dir, 0)];
        let mut depth = 0;
        let mut i = 0;
        let ident = |k: usize| match toks.get(k) {
            Some((Token::Ident(s), _)) => Some(s.as_str()),
            _ => None,
        };
        let punct =
            |k: usize, ch: char| matches!(toks.get(k), Some((Token::Punct(p), _)) if *p == ch);
        while i < toks.len() {
            let (cur, cur_dir, _) = stack.last().unwrap().clone();
            let line = toks[i].1;
            match &toks[i].0 {
                Token::Punct('{') => {
                    depth += 1;
                    i += 1;
                }
                Token::Punct('}') => {
                    if stack.len() > 1 && stack.last().unwrap().2 == depth {
                        stack.pop();
                    }
                    depth -= 1;
                    i += 1;
                }
                Token::Ident(w) if w == "mod" && ident(i + 1).is_some() => {
                    let name = ident(i + 1).unwrap().to_string();
                    let mut path = self.modules[cur].path.clone();
                    path.push(name.clone());
                    if punct(i + 2, ';') {
                        let a = cur_dir.join(format!("{name}.rs"));
                        let b = cur_dir.join(&name).join("mod.rs");
                        let child = if a.is_file() { a } else { b };
                        assert!(
                            child.is_file(),
                            "{}: no file for `mod {name}`",
                            file.display()
                        );
                        let child_dir = if child.ends_with("mod.rs") {
                            child.parent().unwrap().to_path_buf()
                        } else {
                            cur_dir.join(&name)
                        };
                        self.read_file(&child, child_dir, path, Some(cur));
                        i += 3;
                    } else if punct(i + 2, '{') {
                        let m = self.new_module(path, file, Some(cur));
                        depth += 1;
                        stack.push((m, cur_dir.join(&name), depth));
                        i += 3;
                    } else {
                        i += 1;
                    }
                }
                Token::Ident(w) if w == "use" => {
                    // `pub use`, `pub(crate) use`, `pub(in …) use`.
                    let mut v = i;
                    if i > 0 && punct(i - 1, ')') {
                        while v > 0 && !punct(v - 1, '(') {
                            v -= 1;
                        }
                        v = v.saturating_sub(1);
                    }
                    let public = v > 0 && ident(v - 1) == Some("pub");
                    let mut k = i + 1;
                    let mut trees = vec![];
                    use_tree(&toks, &mut k, vec![], &mut trees);
                    for segments in trees {
                        self.modules[cur].named.push(Named {
                            segments,
                            line,
                            used: true,
                            public,
                        });
                    }
                    i = k;
                }
                Token::Ident(w) => {
                    // An expression path: `a::b::c` (not `x.a::…`, not `$crate::…`).
                    let after_sep = i > 0 && toks[i - 1].0 == Token::Sep;
                    let macro_var = i > 0 && toks[i - 1].0 == Token::Punct('$');
                    if !after_sep
                        && !macro_var
                        && toks.get(i + 1).map(|t| &t.0) == Some(&Token::Sep)
                    {
                        let mut segments = vec![w.clone()];
                        let mut k = i + 1;
                        while toks.get(k).map(|t| &t.0) == Some(&Token::Sep) {
                            match ident(k + 1) {
                                Some(s) => {
                                    segments.push(s.to_string());
                                    k += 2;
                                }
                                None => break,
                            }
                        }
                        self.modules[cur].named.push(Named {
                            segments,
                            line,
                            used: false,
                            public: false,
                        });
                        i = k;
                    } else {
                        i += 1;
                    }
                }
                _ => i += 1,
            }
        }
    }

    /// The module a path named in `from` leads into, if it is one of this crate's (its
    /// deepest module: `crate::a::b::Item` leads into `a::b`).
    fn resolve(&self, from: usize, segments: &[String], hops: usize) -> Option<usize> {
        let mut cur = from;
        let mut rest = segments;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                cur = 0;
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().map(String::as_str) == Some("super") {
                    cur = self.modules[cur].parent?;
                    rest = &rest[1..];
                }
            }
            Some(first) if self.modules[from].children.contains_key(first) => {}
            _ => return None,
        }
        for seg in rest {
            if let Some(&child) = self.modules[cur].children.get(seg) {
                cur = child;
            } else {
                // A name the module re-exports leads into the module it comes from.
                if hops < 8
                    && let Some(n) = self.modules[cur]
                        .named
                        .iter()
                        .find(|n| n.used && n.public && n.segments.last() == Some(seg))
                    && let Some(t) = self.resolve(cur, &n.segments, hops + 1)
                {
                    return Some(t);
                }
                break;
            }
        }
        Some(cur)
    }

    /// The modules `m` imports (not itself; the crate root's `pub use` lines excluded).
    fn imports(&self, m: usize) -> BTreeMap<usize, (PathBuf, usize)> {
        let mut out = BTreeMap::new();
        for n in &self.modules[m].named {
            if m == 0 && n.used && n.public {
                continue;
            }
            let segments: Vec<String> = n.segments.iter().filter(|s| *s != "*").cloned().collect();
            if let Some(t) = self.resolve(m, &segments, 0)
                && t != m
            {
                out.entry(t)
                    .or_insert_with(|| (self.modules[m].file.clone(), n.line));
            }
        }
        out
    }

    fn edge_count(&self) -> usize {
        self.edges.iter().map(BTreeMap::len).sum()
    }

    fn name(&self, m: usize) -> String {
        if self.modules[m].path.is_empty() {
            "crate".into()
        } else {
            self.modules[m].path.join("::")
        }
    }

    fn find(&self, name: &str) -> usize {
        (0..self.modules.len())
            .find(|&m| self.name(m) == name)
            .unwrap_or_else(|| panic!("no module {name}"))
    }

    /// The strongly connected components of more than one module (Tarjan's algorithm).
    fn circles(&self) -> Vec<Vec<usize>> {
        struct State {
            index: Vec<Option<usize>>,
            low: Vec<usize>,
            on: Vec<bool>,
            stack: Vec<usize>,
            next: usize,
            out: Vec<Vec<usize>>,
        }
        fn visit(g: &Graph, v: usize, s: &mut State) {
            s.index[v] = Some(s.next);
            s.low[v] = s.next;
            s.next += 1;
            s.stack.push(v);
            s.on[v] = true;
            for &w in g.edges[v].keys() {
                match s.index[w] {
                    None => {
                        visit(g, w, s);
                        s.low[v] = s.low[v].min(s.low[w]);
                    }
                    Some(iw) if s.on[w] => s.low[v] = s.low[v].min(iw),
                    _ => {}
                }
            }
            if Some(s.low[v]) == s.index[v] {
                let mut scc = vec![];
                loop {
                    let w = s.stack.pop().unwrap();
                    s.on[w] = false;
                    scc.push(w);
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    scc.sort();
                    s.out.push(scc);
                }
            }
        }
        let n = self.modules.len();
        let mut s = State {
            index: vec![None; n],
            low: vec![0; n],
            on: vec![false; n],
            stack: vec![],
            next: 0,
            out: vec![],
        };
        for v in 0..n {
            if s.index[v].is_none() {
                visit(self, v, &mut s);
            }
        }
        s.out
    }

    /// A circle's imports, one a line, each with where it is made.
    fn describe(&self, circle: &[usize], root: &Path) -> String {
        let set: BTreeSet<usize> = circle.iter().copied().collect();
        let mut text = String::new();
        for &a in circle {
            for (&b, (file, line)) in &self.edges[a] {
                if set.contains(&b) {
                    let file = file.strip_prefix(root).unwrap_or(file);
                    text += &format!(
                        "  {} -> {}   ({}:{line})\n",
                        self.name(a),
                        self.name(b),
                        file.display()
                    );
                }
            }
        }
        text
    }
}

/// Expands the use tree at `toks[*k]` (after `use`, or inside braces) under `prefix`
/// into full paths; leaves `*k` after it (and after the `;` at the top level).
fn use_tree(
    toks: &[(Token, usize)],
    k: &mut usize,
    prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) {
    let top = prefix.is_empty();
    let mut segments = prefix;
    loop {
        match toks.get(*k).map(|t| &t.0) {
            Some(Token::Sep) => *k += 1,
            Some(Token::Ident(s)) => {
                if s != "self" || segments.is_empty() {
                    segments.push(s.clone());
                }
                *k += 1;
                match toks.get(*k).map(|t| &t.0) {
                    Some(Token::Sep) => *k += 1,
                    Some(Token::Ident(a)) if a == "as" => {
                        *k += 2;
                        out.push(segments);
                        break;
                    }
                    _ => {
                        out.push(segments);
                        break;
                    }
                }
            }
            Some(Token::Punct('{')) => {
                *k += 1;
                loop {
                    match toks.get(*k).map(|t| &t.0) {
                        Some(Token::Punct('}')) | None => {
                            *k += 1;
                            break;
                        }
                        Some(Token::Punct(',')) => *k += 1,
                        _ => use_tree(toks, k, segments.clone(), out),
                    }
                }
                break;
            }
            Some(Token::Punct('*')) => {
                *k += 1;
                segments.push("*".into());
                out.push(segments);
                break;
            }
            _ => break,
        }
    }
    if top {
        while let Some((t, _)) = toks.get(*k) {
            *k += 1;
            if *t == Token::Punct(';') {
                break;
            }
        }
    }
}

#[test]
fn use_trees_expand() {
    let toks = tokens("use crate::a::{self, b::{C, D as E}, *}; use super::F;");
    let mut k = 1;
    let mut out = vec![];
    use_tree(&toks, &mut k, vec![], &mut out);
    let paths: Vec<String> = out.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        paths,
        [
            "crate::a",
            "crate::a::b::C",
            "crate::a::b::D",
            "crate::a::*"
        ]
    );
    assert_eq!(toks[k].0, Token::Ident("use".into()));
    // Strings, characters, lifetimes and comments hide nothing and show nothing.
    let t = tokens(
        "let s = r#\"crate::x\"#; let c = '\"'; fn f<'a>() {} /* crate::y */ b\"z\"; crate::w",
    );
    let idents: Vec<&str> = t
        .iter()
        .filter_map(|(t, _)| match t {
            Token::Ident(s) => Some(s.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(idents, ["let", "s", "let", "c", "fn", "f", "crate", "w"]);
}
