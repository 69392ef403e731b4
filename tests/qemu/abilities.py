"""Issue 28's optional parts on real firmware (`tests/qemu/run.sh
--abilities`): the A9 CLI firmware `agent-abilities` with PKG_AGENT_NOTES,
PKG_AGENT_SCHEDULE and PKG_AGENT_SUMMARY (tests/qemu/layout.py), booted on
an SD image that survives reboots (tests/qemu/sdcard.py), against the
scripted server's notes tools, scheduled prompt and summary
(testkit/src/bin/qemu_llm_server.rs). Std lib only; driven by drive.py.

Groups of steps (each starts from a board at the shell; a failed step ends
its group, the next group boots the board again on the same image):
- notes across a reboot: fresh image; `remember door code-4711` in the chat
  (`Result: remembered "door"`); Ctrl-D, cleanup, heap back; the host reads
  the notes file from the image (its head line, the note, no .tmp left);
  reboot on the same image; `recall door` (`Result: door: code-4711`);
- a schedule every 5 s while the chat is used: `agent_schedule add every
  5s "what is 2+3?"` at the shell, main_loop_entry, two questions typed
  over about 12 s, each answered its own answer while the scheduled
  replies (`schedule #1: 5`) show at least twice; Ctrl-D, `agent_schedule
  list` (runs, missed), `del 1`, no run for 7 s after it; an hourly entry
  added, the board rebooted: `list` still shows it, deleted; heap back;
- the notes file made unreadable between boots (first cluster 0: open
  works, read fails), then replaced by foreign bytes: the board keeps
  running, says what it did (a set-aside line, or nothing when it reads
  the unreadable file as empty), `recall door` finds nothing, `remember x
  y` works, heap back; the host reads what the board left on the image.
"""
import re
import time

from board import Timeout  # noqa: F401 (raised by the board's waits)

NOTES = '/agent_notes.txt'      # PKG_AGENT_NOTES_FILE (layout.py ABILITIES_NOTES_FILE)
SCHEDULE = '/agent_sched.txt'   # PKG_AGENT_SCHEDULE_FILE (layout.py ABILITIES_SCHEDULE_FILE)
NOTES_HEAD = b'rtt-agent notes 1\n'
SCHEDULE_HEAD = b'rtt-agent schedule 1\n'
CHAT_PROMPT = 'you> '
# The scheduled prompt and the scripted model's answer to it
# (qemu_llm_server: SCHEDULED_PROMPT, SCHEDULED_ANSWER).
SCHEDULED = 'what is 2+3?'
SCHEDULED_LINE = re.compile(r'schedule #1: 5\b')
# The two questions typed while the schedule runs: one the scripted model
# answers after 12 s (the loop busy across two due times of the 5 s entry:
# the first run waits, the next one is counted as missed), then the
# arithmetic model's two tool rounds.
QUESTIONS = (('waitfor 12: then say so', r'Waited 12 seconds\.'),
             ('what is (2+3)*4?', r'The result is 20\.'))
# A line typed in two halves around a scheduled reply.
HALVES = ('what is (6+1)', '*6?', r'The result is 42\.')
SET_ASIDE = re.compile(r'notes: %s: ([^;\n]*); set aside as \.bad, a new file is started' % re.escape(NOTES))
FOREIGN = b'hello from the host: this is not a notes file\n'


def plain(text):
    return re.sub(r'\x1b\[[0-9;]*m', '', text)


def drive(run, bsp, Fail, one_line):
    """Fail, one_line: drive.py's (it runs as __main__: importing it here
    would make another Fail class, which run.attempt would not catch)."""
    fw = 'agent-abilities'
    st = {'boots': 0}

    def b():
        if run.board is None:
            raise Fail('no board (an earlier step stopped it)')
        return run.board

    # -- helpers ---------------------------------------------------------------
    def boot(label):
        """Boot on the card image (stopping a running board first): `free`."""
        run.stop()
        st['boots'] += 1
        heap = run.boot(bsp, fw, sd=st['img'])
        how, tick = run.sd_mount
        if how != 'mounted':
            raise Fail('the card was %s by the board, not mounted as it was' % how)
        st['boot_used'] = heap['used']
        run.figures.append(('%s: heap used at boot %d (%s; free)' % (fw, st['boots'], label), heap['used']))
        return heap

    def start_chat():
        """main_loop_entry; the start's log text (up to the chat prompt)."""
        mark = len(b().buf)
        b().send('main_loop_entry\r')
        b().expect(r'Agent chat:[^\n]*\n', 30, 'main_loop_entry opens the chat')
        b().expect(re.escape(CHAT_PROMPT), 5, 'the chat prompt')
        b().quiet(0.5)
        return plain(b().since(mark))

    def ask(text, expect, timeout=60):
        """Type a line in the chat; wait for `expect` after its echo, then
        the prompt. The chat may show a scheduled reply first (an unasked
        one): the wait is for this line's answer, not the next prompt.
        Returns (reply text, seconds, start, end offsets in the buffer)."""
        bd = b()
        t0 = time.monotonic()
        bd.send(text + '\r')
        # The chat's `agent> ` once it took the line (not the echo: a log
        # line of the loop thread, such as the summary's, may split it).
        start = bd.expect(r'agent> ', 15, 'the chat takes %r (its `agent> `)' % text).end()
        try:
            m = bd.expect(expect, timeout, 'the answer to %r' % text)
        except Timeout as e:
            raise Fail('no answer matching %r to %r within %d s: %s | said: %s'
                       % (expect, text, timeout, e, one_line(bd.since(start))))
        # The prompt, or a NUL byte where a log line of the loop thread
        # clobbered it (rt_kprintf's one buffer without
        # RT_USING_THREADSAFE_PRINTF; see console_clean below).
        pm = bd.expect(r'%s|\x00' % re.escape(CHAT_PROMPT), 10, 'the chat prompt after the answer to %r' % text)
        prompt = pm.start()
        if pm.group(0) == '\x00':
            bd.quiet(0.5)
        # How often the answer is on the console up to that prompt.
        st.setdefault('shown', []).append((text, len(re.findall(expect, plain(bd.buf[start:prompt]))),
                                           plain(bd.buf[start:prompt])))
        return plain(bd.buf[start:m.end()]), time.monotonic() - t0, start, m.end()

    def leave():
        bd = b()
        bd.send('\x04')
        bd.expect(r'leaving the agent chat', 10, 'Ctrl-D leaves the chat')
        run.shell_alive('after Ctrl-D')

    def cleanup():
        t0 = time.monotonic()
        b().run('cleanup_agent_entry', timeout=40)
        secs = time.monotonic() - t0
        heap = b().free()
        if heap['used'] != st['boot_used']:
            raise Fail('heap used after cleanup is %d, at boot %d (%+d)'
                       % (heap['used'], st['boot_used'], heap['used'] - st['boot_used']))
        run.figures.append(('%s: heap used after cleanup, boot %d' % (fw, st['boots']), heap['used']))
        run.figures.append(('%s: heap maximum (free), boot %d' % (fw, st['boots']), heap['max']))
        return 'cleanup returned in %.1f s; used %d (= boot), maximum %s' % (secs, heap['used'], heap['max'])

    def answers_since(mark, scenario):
        return [a for a in run.server.answers(mark) if a[0] == scenario]

    # -- notes across a reboot ----------------------------------------------------
    def fresh():
        st['img'] = run.sd_image('abilities')
        heap = boot('fresh image')
        if run.sd_cat(NOTES) is not None:
            raise Fail('a fresh card has %s' % NOTES)
        return 'fresh %d MiB image mounted at "/"; no %s; heap used %d' % (st['img'].mib, NOTES, heap['used'])

    def remember():
        log = start_chat()
        mark = run.server.mark()
        reply, secs, _, _ = ask('remember door code-4711', r'Result: remembered "door"')
        calls = answers_since(mark, 'remember-call')
        done = answers_since(mark, 'remember-answer')
        if len(calls) != 1 or len(done) != 1:
            raise Fail('the server saw %s' % run.server.answers(mark))
        said = [ln.strip() for ln in log.splitlines() if re.search(r'schedule:|memory:|notes:', ln)]
        return 'answered in %.1f s (one remember call, one answer)%s' % (
            secs, '; start log: ' + ' | '.join(said) if said else '')

    def leave_and_clean():
        leave()
        return cleanup()

    def host_reads():
        run.stop()
        data = st['img'].read(NOTES)
        if data is None:
            raise Fail('%s is not on the image (names: %s)' % (NOTES, st['img'].listdir('/')))
        if not data.startswith(NOTES_HEAD):
            raise Fail('%s starts %r, not %r' % (NOTES, data[:40], NOTES_HEAD))
        if b'n\tdoor\tcode-4711\n' not in data:
            raise Fail('%s holds no note "door": %r' % (NOTES, data))
        left = [n for n in st['img'].listdir('/') if n.lower().endswith('.tmp')]
        if left:
            raise Fail('a temporary file is left on the card: %s' % left)
        run.figures.append(('%s: %s after one note (bytes)' % (fw, NOTES), len(data)))
        return '%d bytes: %r; on the card: %s' % (len(data), data, ', '.join(st['img'].listdir('/')))

    def recall_after_reboot():
        heap = boot('reboot on the same image')
        log = start_chat()
        mark = run.server.mark()
        reply, secs, _, _ = ask('recall door', r'Result: door: code-4711')
        if len(answers_since(mark, 'recall-call')) != 1:
            raise Fail('the server saw %s' % run.server.answers(mark))
        said = [ln.strip() for ln in log.splitlines() if re.search(r'schedule:|memory:|notes:', ln)]
        return 'heap at boot %d; answered in %.1f s%s' % (
            heap['used'], secs, '; start log: ' + ' | '.join(said) if said else '')

    # -- the schedule -------------------------------------------------------------
    def ensure_shell(label):
        """A board at the shell with the agent stopped (rebooted when an
        earlier step failed)."""
        if run.board is None:
            boot(label)

    def schedule_add():
        ensure_shell('reboot for the schedule steps')
        out = b().run('agent_schedule add every 5s "%s"' % SCHEDULED)
        if not re.search(r'scheduled #1\b', out):
            raise Fail('`agent_schedule add` printed %r' % one_line(out))
        return 'scheduled #1'

    def schedule_chat():
        bd = b()
        log = start_chat()
        st['shown_from'] = len(st.get('shown', []))
        if not re.search(r'schedule: 1 scheduled prompt\(s\)', log):
            raise Fail('the start did not log "schedule: 1 scheduled prompt(s)": %s' % one_line(log))
        mark = len(bd.buf)
        smark = run.server.mark()
        t0 = time.monotonic()
        got = []
        for q, expect in QUESTIONS:
            reply, secs, start, end = ask(q, expect)
            got.append((q, secs, start, end))
        # Until the second run's reply (the first came after the slow
        # answer), at most 8 s more.
        deadline = time.monotonic() + 8
        while len(SCHEDULED_LINE.findall(plain(bd.since(mark)))) < 2 and time.monotonic() < deadline:
            bd.quiet(0.5)
        bd.quiet(0.5)
        window = time.monotonic() - t0
        text = plain(bd.since(mark))
        lines = SCHEDULED_LINE.findall(text)
        # Each question's answer between its own echo and the next line.
        for n, (q, secs, start, end) in enumerate(got):
            others = [o for o in QUESTIONS if o[0] != q]
            seg = plain(bd.buf[start:end])
            for oq, oexp in others:
                if re.search(oexp, seg):
                    raise Fail('the answer to %r shows the answer of %r' % (q, oq))
        sched = answers_since(smark, 'scheduled')
        arith = [a for a in run.server.answers(smark) if a[0] == 'arith']
        slow = answers_since(smark, 'waitfor')
        summary = answers_since(smark, 'summary')
        st['sched_runs_seen'] = len(lines)
        # The scheduled reply as the chat shows it (streamed where the
        # cursor is: after the prompt, or on a line of its own).
        unasked = len(re.findall(r'^(?:you> |agent> )?5[ \t]*$', text, re.M))
        if len(lines) < 2:
            raise Fail('%d `schedule #1: 5` line(s) in %.1f s (scheduled requests at the server: %d)'
                       % (len(lines), window, len(sched)))
        run.figures.append(('%s: scheduled replies logged in %.1f s of chat (every 5 s)' % (fw, window), len(lines)))
        return ('%r answered in %.1f s, %r in %.1f s, each its own answer; in %.1f s: %d `schedule #1: 5` log '
                'lines, %d reply line(s) `5` shown by the chat, %d scheduled requests, %d arithmetic, %d waitfor, '
                '%d summary request(s) at the server' % (QUESTIONS[0][0], got[0][1], QUESTIONS[1][0], got[1][1],
                                                         window, len(lines), unasked, len(sched), len(arith),
                                                         len(slow), len(summary)))

    def shown_once():
        """Every line typed in the schedule's chat: its answer on the
        console once (the loop's `last_reply_streamed` is one flag for the
        agent: when the next message, a scheduled prompt waiting behind the
        line, starts before the chat looked at it, the chat prints the
        streamed answer a second time)."""
        seen = st.get('shown', [])[st.get('shown_from', 0):]
        twice = [(t, n, one_line(seg)) for t, n, seg in seen if n != 1]
        if twice:
            raise Fail('; '.join('%r: its answer shown %d times: %s' % x for x in twice))
        return '%d line(s), each answer shown once' % len(seen)

    def half_typed():
        """Half a line typed, a scheduled reply shown meanwhile, the rest
        typed: the whole line is sent and answered."""
        bd = b()
        first, rest, expect = HALVES
        mark = len(bd.buf)
        smark = run.server.mark()
        bd.send(first)
        bd.expect(re.escape(first), 5, 'the chat echoes the first half')
        try:
            bd.expect(SCHEDULED_LINE.pattern, 8, 'a scheduled reply while half a line is typed')
        except Timeout as e:
            raise Fail('no scheduled reply within 8 s of the first half: %s' % e)
        bd.quiet(0.5)
        shown = plain(bd.since(mark))
        again = shown.rfind(CHAT_PROMPT + first)
        reply, secs, _, _ = ask(rest, expect)
        users = [ln for ln in run.server.lines()[smark:] if 'user=' in ln and 'scenario' not in ln]
        sent = [re.search(r'user="([^"]*)"', ln).group(1) for ln in users if re.search(r'user="([^"]*)"', ln)]
        whole = first + rest
        if whole not in sent:
            raise Fail('the server never saw %r (user messages since: %s)' % (whole, sent))
        return ('%r, a scheduled reply, then %r: the server got %r, answered in %.1f s; the chat %s the prompt and '
                'the half line after the reply' % (first, rest, whole, secs,
                                                   'showed' if again >= 0 else 'did NOT show'))

    def schedule_list_del():
        leave()
        out = plain(b().run('agent_schedule list'))
        m = re.search(r'#1 every 5s: %s \(runs (\d+), missed (\d+)\)' % re.escape(SCHEDULED), out)
        if not m:
            raise Fail('`agent_schedule list` printed %r' % one_line(out))
        runs, missed = int(m.group(1)), int(m.group(2))
        if runs < 2:
            raise Fail('`agent_schedule list` counts %d runs' % runs)
        if missed < 1:
            raise Fail('`agent_schedule list` counts no missed run, though the loop was busy 12 s with a run '
                       'waiting (runs %d)' % runs)
        run.figures.append(('%s: agent_schedule list after the chat' % fw, 'runs %d, missed %d' % (runs, missed)))
        # The scheduler's and the loop's stacks after the chat (both threads
        # still run: Ctrl-D leaves the agent running).
        for prefix in ('AgentSch', 'AgentLoop'):
            got = b().thread_stack(prefix)
            if got:
                size, pct, line = got
                run.figures.append(('%s: %s stack high-water (list thread, after the schedule\'s chat)'
                                    % (fw, line.split()[0]), '%s%% of %d bytes' % (pct, size)))
        smark = run.server.mark()
        out = b().run('agent_schedule del 1')
        if not re.search(r'deleted #1\b', out):
            raise Fail('`agent_schedule del 1` printed %r' % one_line(out))
        t_del = time.monotonic()
        mark = len(b().buf)
        b().quiet(7)
        after = plain(b().since(mark))
        lines = SCHEDULED_LINE.findall(after)
        new = answers_since(smark, 'scheduled')
        if new or lines:
            raise Fail('after `del 1`: %d scheduled request(s) at the server, %d `schedule #1` line(s) in %.0f s'
                       % (len(new), len(lines), time.monotonic() - t_del))
        out = plain(b().run('agent_schedule list'))
        if 'no scheduled prompts' not in out:
            raise Fail('`agent_schedule list` after del printed %r' % one_line(out))
        return ('list: `#1 every 5s: %s (runs %d, missed %d)`; `deleted #1`; no scheduled request and no '
                '`schedule #1` line in the 7 s after; list: no scheduled prompts' % (SCHEDULED, runs, missed))

    def schedule_survives():
        out = b().run('agent_schedule add every 1h "%s"' % SCHEDULED)
        m = re.search(r'scheduled #(\d+)', out)
        if not m:
            raise Fail('`agent_schedule add every 1h` printed %r' % one_line(out))
        st['hourly'] = int(m.group(1))
        if st['hourly'] == 1:
            raise Fail('the number 1 was used again after `del 1`')
        cleaned = cleanup()
        boot('reboot with an hourly entry')
        out = plain(b().run('agent_schedule list'))
        want = r'#%d every 1h: %s' % (st['hourly'], re.escape(SCHEDULED))
        if not re.search(want, out):
            raise Fail('after the reboot `agent_schedule list` printed %r' % one_line(out))
        log = start_chat()
        back = re.search(r'memory: the summary note is back from the notes file', log)
        if not re.search(r'schedule: 1 scheduled prompt\(s\)', log):
            raise Fail('the start after the reboot did not log one scheduled prompt: %s' % one_line(log))
        leave()
        out = b().run('agent_schedule del %d' % st['hourly'])
        if not re.search(r'deleted #%d\b' % st['hourly'], out):
            raise Fail('`agent_schedule del %d` printed %r' % (st['hourly'], one_line(out)))
        out = plain(b().run('agent_schedule list'))
        if 'no scheduled prompts' not in out:
            raise Fail('`agent_schedule list` after del printed %r' % one_line(out))
        st['summary_back'] = bool(back)
        return ('#%d added (numbers not reused); before the reboot: %s; after it `list`: `#%d every 1h: %s`; the '
                'start logged one scheduled prompt%s; deleted, list empty'
                % (st['hourly'], cleaned, st['hourly'], SCHEDULED,
                   ' and "memory: the summary note is back from the notes file"' if back else
                   ' (no summary note came back)'))

    # -- a damaged notes file -----------------------------------------------------
    def damaged(kind):
        def fn():
            run.stop()
            img = st['img']
            if kind == 'unreadable':
                first, size = img.make_unreadable(NOTES)
                how = 'first cluster %d -> 0 (size %d kept)' % (first, size)
            else:
                img.write(NOTES, FOREIGN)
                how = '%d foreign bytes written' % len(FOREIGN)
            st['damage'] = how
            boot('notes file %s' % kind)
            log = start_chat()
            mark = len(b().buf)
            reply, secs, _, _ = ask('recall door', r'Result: no note matches "door"')
            reply2, secs2, _, _ = ask('remember x y', r'Result: remembered "x"')
            reply3, _, _, _ = ask('recall x', r'Result: x: y')
            said = log + plain(b().since(mark))
            aside = SET_ASIDE.findall(said)
            notes_lines = [ln.strip() for ln in said.splitlines() if re.search(r'notes: |memory: ', ln)]
            st['said_' + kind] = notes_lines
            if kind == 'foreign' and not aside:
                raise Fail('no set-aside line for the foreign file; notes/memory lines: %s' % notes_lines)
            return ('%s; the board kept running; %s; `recall door`: no note matches; `remember x y`, `recall x`: '
                    'x: y' % (how, ('logged: ' + ' | '.join(notes_lines)) if notes_lines
                              else 'no notes line logged (the read error was read as an empty file)'))
        return fn

    def host_after(kind):
        def fn():
            run.stop()
            img = st['img']
            data = img.read(NOTES)
            bad = img.read(NOTES + '.bad')
            if data is None or not data.startswith(NOTES_HEAD) or b'n\tx\ty\n' not in data:
                raise Fail('%s after `remember x y`: %r' % (NOTES, data))
            if b'n\tdoor\t' in data:
                raise Fail('%s still holds "door" after the old file was %s: %r' % (NOTES, kind, data))
            if kind == 'foreign' and bad != FOREIGN:
                raise Fail('%s.bad holds %r, not the foreign bytes' % (NOTES, bad))
            return '%s: %r; %s.bad: %s; on the card: %s' % (
                NOTES, data, NOTES, ('%r' % bad[:60]) if bad is not None else 'none',
                ', '.join(img.listdir('/')))
        return fn

    def console_clean():
        """No NUL byte on any console of this firmware: the CLI thread and
        the loop thread both print through rt_kprintf, whose one static
        buffer (rt_log_buf) this BSP does not guard
        (RT_USING_THREADSAFE_PRINTF off, as it ships): a log line at the
        moment the chat prints its prompt leaves `yo`, the log line, then
        `\\0> `."""
        import glob
        import os
        bad = []
        files = sorted(glob.glob(os.path.join(run.args.logs, 'serial-%s-*.txt' % fw)))
        for path in files:
            with open(path, encoding='utf-8', errors='replace') as f:
                text = plain(f.read())
            for m in re.finditer('\x00', text):
                bad.append('%s: %r' % (os.path.basename(path), text[max(0, m.start() - 90):m.end() + 10]))
        if bad:
            raise Fail('%d NUL byte(s) on the console: %s' % (len(bad), ' || '.join(bad)))
        return '%d transcript(s), no NUL byte' % len(files)

    groups = (
        ('notes across a reboot', (
            ('fresh SD image: "/" mounted, no notes file', fresh),
            ('`remember door code-4711` in the chat: Result: remembered "door"', remember),
            ('Ctrl-D, cleanup_agent_entry, heap back', leave_and_clean),
            ('board stopped: the host reads %s (head line, the note, no .tmp)' % NOTES, host_reads),
            ('reboot on the same image: `recall door` -> Result: door: code-4711', recall_after_reboot),
            ('Ctrl-D, cleanup_agent_entry, heap back (boot 2)', leave_and_clean),
        )),
        ('schedule', (
            ('`agent_schedule add every 5s "%s"` at the shell: scheduled #1' % SCHEDULED, schedule_add),
            ('main_loop_entry; two questions while the schedule fires (one answered after 12 s)', schedule_chat),
            ('half a line typed, a scheduled reply, the rest typed: the whole line answered', half_typed),
            ('Ctrl-D; `agent_schedule list` (runs, missed); `del 1`: no run for 7 s', schedule_list_del),
            ('an hourly entry survives a reboot (`list` after it), then deleted', schedule_survives),
            ('cleanup_agent_entry, heap back (after the schedule reboot)', cleanup),
            # Last in its group: it only reads what the chat steps saw.
            ('each line typed in the schedule\'s chat: its answer shown once', shown_once),
        )),
        ('unreadable notes file', (
            ('%s made unreadable between boots: recall finds nothing, remember works' % NOTES,
             damaged('unreadable')),
            ('Ctrl-D, cleanup_agent_entry, heap back (unreadable file)', leave_and_clean),
            ('board stopped: the host reads the new notes file', host_after('unreadable')),
        )),
        ('foreign notes file', (
            ('%s replaced by foreign bytes: set aside as .bad, recall finds nothing, remember works' % NOTES,
             damaged('foreign')),
            ('Ctrl-D, cleanup_agent_entry, heap back (foreign file)', leave_and_clean),
            ('board stopped: the host reads the new file and the .bad one', host_after('foreign')),
        )),
        ('console', (
            ('every console of this firmware free of NUL bytes (no clobbered prompt)', console_clean),
        )),
    )
    for gname, steps in groups:
        for i, (name, fn) in enumerate(steps):
            if not run.attempt(fw, name, fn):
                run.stop()
                for later, _ in steps[i + 1:]:
                    run.record(fw, later, 'SKIP', 'not run: "%s" failed' % name)
                break
        if 'img' not in st:
            for g2, s2 in groups[1:]:
                run.record(fw, g2, 'SKIP', 'not run: no SD image')
            break
    run.stop()
    # Flash: the package's share of this firmware (the notes, the schedule
    # and the summary are in it).
    try:
        import mapsize
        import os
        m = os.path.join(bsp, 'rtthread.map')
        run.figures.extend(('%s: %s' % (fw, w), v) for w, v in mapsize.rows(m))
        run.figures.append(('%s: flash in all (text + rodata + data kept by the linker)' % fw,
                            '%d bytes' % mapsize.firmware_flash(m)))
        # What the three options add: against agent-cli of the same work
        # dir (built in this run with --abilities; with --abilities-only, by
        # an earlier run there, if any).
        plain_map = os.path.join(os.path.dirname(os.path.abspath(bsp)), 'agent-cli', 'rtthread.map')
        if os.path.exists(plain_map):
            mine, other = mapsize.package_flash(m), mapsize.package_flash(plain_map)
            run.figures.append(('flash PKG_AGENT_NOTES, PKG_AGENT_SCHEDULE and PKG_AGENT_SUMMARY add to the package '
                                '(agent-abilities - agent-cli of this work dir)',
                                '%+d bytes (%d - %d)' % (mine - other, mine, other)))
    except (OSError, SystemExit) as e:
        run.figures.append(('%s: flash' % fw, 'unavailable: %s' % e))
