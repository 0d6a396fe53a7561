#!/usr/bin/env python3
"""Regenerates elle_lattice.json, the expected lattice facts for isolde's
model tests, straight from Elle's consistency_model.clj (not from isolde's
tables), so the Rust tables are checked against the source they copy.

Usage: git -C <elle repo> show <commit>:src/elle/consistency_model.clj \
         | python3 derive_from_elle.py <commit> > elle_lattice.json
"""
import json
import re
import sys

src = re.sub(r';[^\n]*', '', sys.stdin.read())


def grab(name):
    """Text of the first {...} literal after (def name."""
    start = src.index('{', src.index('(def ' + name))
    depth = 0
    for k in range(start, len(src)):
        depth += {'{': 1, '}': -1}.get(src[k], 0)
        if depth == 0:
            return src[start:k + 1]


def parse_map(text):
    """A map of keyword -> [keywords] or keyword -> keyword."""
    toks = re.findall(r'\{|\}|\[|\]|:[^\s\[\]{}()]+', text)
    out, i, key = {}, 1, None
    while toks[i] != '}':
        if toks[i] == '[':
            j = toks.index(']', i)
            out.setdefault(key, []).extend(t[1:] for t in toks[i + 1:j])
            i = j + 1
        elif toks[i + 1] not in '[]{}':
            out[toks[i][1:]] = toks[i + 1][1:]
            i += 2
        else:
            key = toks[i][1:]
            i += 1
    return out


canon = parse_map(grab('canonical-model-names'))
C = lambda m: canon.get(m, m)
friendly = {v: k for k, v in canon.items()}
friendly['PL-3'] = 'serializable'          # explicit in Elle
friendly['PL-SS'] = 'strong-serializable'  # Elle's hash-map order (README output)
F = lambda m: friendly.get(m, m)


def edges(m, f=lambda x: x, g=lambda x: x):
    out, inn = {}, {}
    for a, bs in m.items():
        for b in bs:
            out.setdefault(f(a), set()).add(g(b))
            inn.setdefault(g(b), set()).add(f(a))
    return out, inn


a_out, a_in = edges(parse_map(grab('implied-anomalies')))
m_out, m_in = edges(parse_map(grab('models')), C, C)
p_out, p_in = edges(parse_map(grab('direct-proscribed-anomalies')), C)


def reach(adj, starts):
    seen, todo = set(starts), list(starts)
    while todo:
        for w in adj.get(todo.pop(), ()):
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


def prohibited(m):
    direct = set().union(*(p_out.get(x, set()) for x in reach(m_out, [C(m)])))
    return reach(a_in, direct)


def boundary(a):
    direct = set().union(*(p_in.get(x, set()) for x in reach(a_out, [a])))
    imp = reach(m_in, direct)
    weakest = {m for m in imp if not any(r != m and r in imp for r in reach(m_out, [m]))}
    return sorted({F(m) for m in weakest}), sorted({F(m) for m in imp - weakest})


all_models = set(m_out) | set(m_in) | set(canon) | set(canon.values())
canonical = sorted(m for m in all_models if C(m) == m)
anomalies = sorted(set(a_out) | set(a_in) | set(p_in))
json.dump({
    'source': 'jepsen-io/elle src/elle/consistency_model.clj at ' + sys.argv[1],
    'all_models': sorted(all_models),
    'implied_models': {m: sorted(reach(m_out, [m])) for m in canonical},
    'prohibited_by_model': {m: sorted(prohibited(m)) for m in canonical},
    'boundary_by_anomaly': {a: dict(zip(('not', 'also_not'), boundary(a))) for a in anomalies},
}, sys.stdout, indent=1, sort_keys=True)
print()
