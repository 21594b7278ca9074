# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-ctk's log lines on stderr.

nvidia-ctk (NVIDIA/nvidia-container-toolkit v1.19.1 cmd/nvidia-ctk/main.go) logs through
sirupsen/logrus with its default TextFormatter (text_formatter.go), on stderr, at level info (``--debug``:
debug, ``--quiet``: errors only). Its output is not a terminal under a test or a role, so
each line has the full form ``time="<RFC 3339>" level=info msg="..."``; the message is
quoted (Go's %q) unless it is made only of letters, digits and ``-._/@^+``.
"""

import datetime
import json

LEVELS = {"error": 2, "warning": 3, "info": 4, "debug": 5}
_PLAIN = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._/@^+")


def _timestamp():
    now = datetime.datetime.now().astimezone()
    text = now.isoformat(timespec="seconds")
    return text[:-6] + "Z" if now.utcoffset() == datetime.timedelta(0) else text


def _quoted(text):
    if all(char in _PLAIN for char in text):
        return text
    return json.dumps(text, ensure_ascii=False)


class Logger:
    def __init__(self, stream, level="info"):
        self.stream = stream
        self.level = level

    def log(self, level, message):
        if LEVELS[level] <= LEVELS[self.level]:
            self.stream.write('time="%s" level=%s msg=%s\n' % (_timestamp(), level, _quoted(message)))

    def info(self, message):
        self.log("info", message)

    def warning(self, message):
        self.log("warning", message)

    def error(self, message):
        self.log("error", message)

    def debug(self, message):
        self.log("debug", message)
