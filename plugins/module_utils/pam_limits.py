# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""pam_limits' locked-memory limit: limits.conf and limits.d, written and read.

pam_limits(8) reads /etc/security/limits.conf, then limits.d/*.conf in C-locale
order, as if they were one file. limits.conf(5): lines for a user name (or a
uid range) take precedence over lines for an @group (or a gid range), which take
precedence over the ``*`` default, whatever the file order; among lines of one
kind, the last one read wins. Group and ``*`` lines never apply to root. The
``%`` domains count logins only. A soft limit above the hard one is lowered to it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from collections import OrderedDict, namedtuple

from ansible_collections.gpuops.hardening.plugins.module_utils.managed_files import managed_header
from ansible_collections.gpuops.hardening.plugins.module_utils.memlock import UNLIMITED, covers

LIMITS_CONF = "/etc/security/limits.conf"
LIMITS_D = "/etc/security/limits.d"
KINDS = ("soft", "hard")

# One memlock line: value is "unlimited" or KiB.
LimitEntry = namedtuple("LimitEntry", "domain kind value path line")

# limits.conf(5) domains: *, a user, @group, a uid range, @ and a gid range.
_DOMAIN = re.compile(r"^(\*|@?[A-Za-z0-9_][A-Za-z0-9_.-]*\$?|@?([0-9]+:[0-9]*|:[0-9]+))$")
# Precedence, most specific first (pam_limits' LIMITS_DEF_USER, _GROUP, _DEFAULT).
PRECEDENCE = ("user", "group", "default")


def valid_domain(domain):
    return bool(_DOMAIN.match(domain or ""))


def precedence(domain):
    """The kind of a domain: user (a name or uid range), group (@...), or default (*)."""
    if domain == "*":
        return "default"
    return "group" if domain.startswith("@") else "user"


def _pam_value(value):
    if value in ("unlimited", "infinity", "-1"):
        return UNLIMITED
    if value.isdigit():
        return int(value)
    return None


def parse_limits(text, path=None):
    """memlock lines of a limits.conf-style text, in order: list of LimitEntry.

    A type of ``-`` sets both soft and hard and gives two entries. Lines pam_limits
    would reject (bad value) or that only count logins (``%`` domains) are left out.
    """
    entries = []
    for number, raw in enumerate((text or "").splitlines(), 1):
        fields = raw.split("#", 1)[0].split()
        if len(fields) != 4 or fields[2] != "memlock" or fields[0].startswith("%"):
            continue
        domain, kind, dummy, value = fields
        value = _pam_value(value)
        if value is None:
            continue
        for one in (KINDS if kind == "-" else (kind,)):
            if one in KINDS:
                entries.append(LimitEntry(domain, one, value, path, number))
    return entries


def render_limits(domain, limit, with_root):
    """The limits.d file that gives domain (and root, when with_root) the limit."""
    lines = [
        managed_header("memlock"),
        "# Locked-memory limit (KiB) for login sessions: GPU jobs pin host memory for",
        "# CUDA transfers, NCCL and RDMA buffers.",
    ]
    domains = [domain]
    if with_root and domain != "root":
        lines.append('# pam_limits never applies "*" or @group lines to root, hence root\'s own lines.')
        domains.append("root")
    for name in domains:
        lines.extend("%-12s %s  memlock  %s" % (name, kind, limit) for kind in KINDS)
    return "\n".join(lines) + "\n"


def _empty():
    return {"soft": None, "hard": None, "soft_source": None, "hard_source": None}


def _entries(files):
    found = []
    for path, text in files:
        found.extend(parse_limits(text, path))
    return found


def effective_login_limits(files, domains):
    """What the lines of each domain set, from files in the order pam_limits reads
    them: the last line of a domain wins. Returns {domain: {"soft": .., "hard": ..,
    "soft_source": path, "hard_source": path}}; None where the domain sets nothing.
    """
    found = OrderedDict((domain, _empty()) for domain in domains)
    for entry in _entries(files):
        if entry.domain in found:
            found[entry.domain][entry.kind] = entry.value
            found[entry.domain][entry.kind + "_source"] = entry.path
    return found


def _clamp_soft(values):
    """pam_limits lowers a soft limit above the hard one to the hard one."""
    if values["soft"] is not None and values["hard"] is not None and not covers(values["hard"], values["soft"]):
        values["soft"], values["soft_source"] = values["hard"], values["hard_source"]
    return values


def overriding_domains(files, domain):
    """Domains whose lines take precedence over domain's for their members, and what
    those members get where it differs from what domain's lines give.

    For ``*`` these are every user and @group named with a memlock line (root
    aside: ``*`` never applies to root anyway); for an @group, every user. A member
    gets the more specific domain's value of each kind it sets, else domain's.
    Returns {other: {"soft", "hard", "soft_source", "hard_source", "takes_precedence_over"}}.
    """
    rank = PRECEDENCE.index(precedence(domain))
    base = effective_login_limits(files, [domain])[domain]
    others = []
    for entry in _entries(files):
        if entry.domain not in others and entry.domain != "root" and PRECEDENCE.index(precedence(entry.domain)) < rank:
            others.append(entry.domain)
    report = OrderedDict()
    for other, values in effective_login_limits(files, others).items():
        member = dict(values)
        for kind in KINDS:
            if member[kind] is None:
                member[kind], member[kind + "_source"] = base[kind], base[kind + "_source"]
        _clamp_soft(member)
        if (member["soft"], member["hard"]) != (base["soft"], base["hard"]):
            member["takes_precedence_over"] = domain
            report[other] = member
    return report


def login_report(files, domains, ours, limit):
    """What login sessions get, and why ours may not hold.

    domains are the ones our file (path ours, or None when not written) sets, the
    first being the pam_limits domain it is for. Returns (report, conflicts):
    report maps each of domains, and each more specific domain whose members get
    something else (overriding_domains), to its values; conflicts are sentences.
    """
    report = effective_login_limits(files, domains)
    conflicts = []
    for domain, values in report.items():
        for kind in KINDS:
            source = values[kind + "_source"]
            if ours and source and source != ours:
                conflicts.append("%s %s memlock %s in %s wins over %s" % (domain, kind, values[kind], source, ours))
        _clamp_soft(values)
    overrides = overriding_domains(files, domains[0])
    report.update(overrides)
    if ours:
        for other, values in overrides.items():
            capped = [kind for kind in KINDS if values[kind] is not None and not covers(values[kind], limit)]
            if capped:
                kind = capped[-1]
                conflicts.append(
                    "%s %s memlock %s in %s takes precedence over %s in %s for %s (a %s line beats a %s line in any "
                    "file order), so they stay below %s" % (
                        other, kind, values[kind], values[kind + "_source"], domains[0], ours,
                        "members of " + other if other.startswith("@") else other,
                        precedence(other), precedence(domains[0]), limit))
    return report, conflicts
