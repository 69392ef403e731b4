"""The simulator on a pseudo-terminal, for the scripts that drive it as a
person would (abilities_pty.py, flags_pty.py, mix.py): start it, read what
it prints, type one key at a time, run a shell command, leave and reopen
the chat.

A script imports it from its own folder (`import pty_sim`) and passes the
function that ends it on a failure: `fail(why, seen)`.
"""
import os
import pty
import select
import time


class Sim:
    """One simulator process on a pseudo-terminal, started with `args` and
    the environment changed by `env` (a value of None removes the name).
    The built-in scripted model always: AGENT_API_URL and
    AGENT_BUILTIN_FORMAT are removed unless `env` sets them."""

    def __init__(self, exe, args, env, fail):
        self.args = list(args)
        self.fail = fail
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            e = dict(os.environ)
            e.pop("AGENT_API_URL", None)
            e.pop("AGENT_BUILTIN_FORMAT", None)
            for k, v in env.items():
                if v is None:
                    e.pop(k, None)
                else:
                    e[k] = v
            os.execve(exe, [exe] + self.args, e)
        self.seen = b""

    def pump(self, timeout):
        r, _, _ = select.select([self.fd], [], [], max(timeout, 0))
        if r:
            try:
                self.seen += os.read(self.fd, 65536)
            except OSError:
                pass

    def mark(self):
        return len(self.seen)

    def wait(self, pattern, since=0, count=1, timeout=30):
        """Until `pattern` has appeared `count` times after `since`; the
        index of its first appearance there."""
        end = time.time() + timeout
        while self.seen[since:].count(pattern) < count:
            left = end - time.time()
            if left <= 0:
                os.kill(self.pid, 9)
                self.fail("%stimed out waiting for %r (x%d)"
                          % ("%s: " % " ".join(self.args) if self.args else "", pattern, count), self.seen)
            self.pump(left)
        return self.seen.index(pattern, since)

    def idle(self, secs):
        """Read for `secs`, whatever comes."""
        end = time.time() + secs
        while time.time() < end:
            self.pump(end - time.time())

    def send(self, data):
        for b in data:  # one key at a time, as typed
            os.write(self.fd, bytes([b]))
            time.sleep(0.002)

    def shell(self, line, expect, timeout=30):
        """A command at msh />: its output up to the next prompt."""
        m = self.mark()
        self.send(line + b"\r")
        self.wait(expect, since=m, timeout=timeout)
        self.wait(b"msh />", since=m, timeout=timeout)
        return self.seen[m:]

    def enter_chat(self, started=False):
        """main_loop_entry: the chat's prompt (and, with `started`, the
        agent's start line first); the mark before it."""
        m = self.mark()
        self.send(b"main_loop_entry\r")
        if started:
            self.wait(b"[mem] agent started", since=m)
        self.wait(b"you> ", since=m)
        # The shell prints its prompt once main_loop_entry returns, then
        # reads the console once before it sleeps: type after that.
        self.wait(b"msh />", since=m)
        time.sleep(0.1)
        return m

    def leave_chat(self, pause=0.1):
        m = self.mark()
        self.send(b"\x04")
        self.wait(b"leaving the agent chat", since=m)
        time.sleep(pause)

    def exit(self, show_env=None):
        """`exit` at msh />: the simulator's exit status (its whole output
        to stderr first when the environment sets `show_env`)."""
        self.send(b"exit\r")
        self.wait(b"bye")
        _, status = os.waitpid(self.pid, 0)
        if show_env and os.environ.get(show_env):
            import sys
            sys.stderr.write("--- %s ---\n%s\n" % (" ".join(self.args), self.seen.decode(errors="replace")))
        return os.waitstatus_to_exitcode(status)
