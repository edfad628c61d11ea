//! Command analysis: a small, quote-aware reading of a shell command line, for the gateway's
//! warnings on an exec approval.

use super::*;

/// Splits a command line at top-level `&&`, `||`, `;`, `|`, `&` and newlines (not inside
/// quotes or `$(…)`), and counts the nested `$(…)` and backtick commands.
pub(super) fn split_commands(cmd: &str) -> (Vec<String>, usize) {
    let chars: Vec<char> = cmd.chars().collect();
    let (mut parts, mut cur, mut nested) = (Vec::new(), String::new(), 0usize);
    let (mut single, mut double, mut backtick, mut depth) = (false, false, false, 0usize);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if single {
            single = c != '\'';
            cur.push(c);
            i += 1;
            continue;
        }
        match c {
            '\\' => {
                cur.push(c);
                if let Some(n) = next {
                    cur.push(n);
                }
                i += 2;
                continue;
            }
            '\'' if !double => single = true,
            '"' => double = !double,
            '`' => {
                if !backtick {
                    nested += 1;
                }
                backtick = !backtick;
            }
            '$' if next == Some('(') => {
                nested += 1;
                depth += 1;
                cur.push_str("$(");
                i += 2;
                continue;
            }
            '(' if depth > 0 => depth += 1,
            ')' if depth > 0 => depth -= 1,
            _ => {}
        }
        let top = !double && !backtick && depth == 0;
        let prev = if i > 0 { chars[i - 1] } else { ' ' };
        let separator = if !top {
            None
        } else {
            match c {
                ';' | '\n' => Some(1),
                '&' if next == Some('&') => Some(2),
                '|' if next == Some('|') => Some(2),
                '|' if next == Some('&') => Some(2),
                '|' => Some(1),
                // A lone `&` sends to the background; `>&`, `&>` and `<&` are redirections.
                '&' if prev != '>' && prev != '<' && next != Some('>') => Some(1),
                _ => None,
            }
        };
        match separator {
            Some(n) => {
                parts.push(std::mem::take(&mut cur));
                i += n;
            }
            None => {
                cur.push(c);
                i += 1;
            }
        }
    }
    parts.push(cur);
    (parts.into_iter().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect(), nested)
}

/// The words of one simple command, quotes removed.
pub(super) fn words(segment: &str) -> Vec<String> {
    let (mut out, mut cur, mut started) = (Vec::new(), String::new(), false);
    let (mut single, mut double) = (false, false);
    let mut chars = segment.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => {
                single = !single;
                started = true;
            }
            '"' if !single => {
                double = !double;
                started = true;
            }
            '\\' if !single => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
                started = true;
            }
            c if c.is_whitespace() && !single && !double => {
                if started {
                    out.push(std::mem::take(&mut cur));
                    started = false;
                }
            }
            c => {
                cur.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(cur);
    }
    out
}

/// `commandAnalysis` of a command line: how many commands, how many nested, and the risky
/// forms the real gateway names (`shell-wrapper`: `sh -c`, `inline-eval`: `python3 -c`, …).
pub fn analyze(command: &str) -> Value {
    let (segments, nested) = split_commands(command);
    let (mut kinds, mut lines): (Vec<&str>, Vec<String>) = (Vec::new(), Vec::new());
    for segment in &segments {
        let ws = words(segment);
        // Past environment assignments and the wrappers that only run what follows.
        let mut rest = ws.iter().skip_while(|w| {
            (w.contains('=') && !w.starts_with('-')) || ["sudo", "env", "exec", "nohup", "command", "time"].contains(&w.as_str())
        });
        let Some(program) = rest.next() else { continue };
        let program = program.rsplit('/').next().unwrap_or(program).to_string();
        let args: Vec<&String> = rest.collect();
        let flag = |pred: &dyn Fn(&str) -> bool| args.iter().find(|a| pred(a.as_str())).map(|a| a.to_string());
        let found = match program.as_str() {
            "sh" | "bash" | "zsh" | "dash" | "ksh" | "ash" | "fish" => {
                flag(&|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c')).map(|_| ("shell-wrapper", format!("{program} -c")))
            }
            p if p.starts_with("python") => flag(&|a| a == "-c").map(|f| ("inline-eval", format!("{program} {f}"))),
            "node" | "nodejs" | "bun" => {
                flag(&|a| ["-e", "--eval", "-p", "--print"].contains(&a)).map(|f| ("inline-eval", format!("{program} {f}")))
            }
            "deno" => flag(&|a| a == "eval").map(|f| ("inline-eval", format!("{program} {f}"))),
            "ruby" | "perl" | "osascript" => flag(&|a| a == "-e" || a == "-E").map(|f| ("inline-eval", format!("{program} {f}"))),
            "php" => flag(&|a| a == "-r").map(|f| ("inline-eval", format!("{program} {f}"))),
            _ => None,
        };
        if let Some((kind, what)) = found {
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
            let line = format!("Contains {kind}: {what}");
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
    }
    json!({"commandCount": segments.len(), "nestedCommandCount": nested, "riskKinds": kinds, "warningLines": lines})
}

/// An argv as one command line, each word quoted for a POSIX shell when it needs it.
pub(super) fn join_argv(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "_./=:@%+,-".contains(c)) {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r#"'"'"'"#))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub(super) fn clean(s: Option<String>) -> Option<String> {
    s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}
