#!/usr/bin/env python3
"""The TLS front of the HTTPS firmwares (tests/qemu/run.sh --tls; std lib
only): a TLS server on 127.0.0.1 that forwards the decrypted bytes to the
scripted server (qemu_llm_server, also on 127.0.0.1) and sends its answer
back over TLS. The guest reaches it through a guestfwd
(10.0.2.100:443 -> `qemu_llm_server --connect 127.0.0.1:<port>`).

Modes, switched at run time with TlsFront.set_mode():
  good            the RSA leaf of the test root CA
  good-ecdsa      the ECDSA (P-256) leaf of the test root CA
  wrong-ca        a leaf signed by a CA the firmware does not trust
  expired         a leaf valid 2020-01-01 .. 2021-01-01
  not-yet-valid   a leaf valid 2090-01-01 .. 2091-01-01
  close-mid-handshake  reads the ClientHello, then closes the connection
  stall-handshake      reads the ClientHello and never answers, until
                       release() (or close())
  large-records   the good RSA leaf; the server's answer is buffered and
                  written in 12 KB pieces, so it reaches the board in TLS
                  records of up to 12 KB (python's ssl writes one record per
                  write, up to 16 KB)

Per connection it records (TlsFront.conns(), a list of dicts in order of
arrival): the mode, the ClientHello's random (peeked before the handshake:
record header 5 bytes, handshake header 4, version 2, then 32 bytes), the
handshake's outcome and time as the server sees it (from the ClientHello
to the end of the server's handshake), whether the session was resumed
(SSLSocket.session_reused) and the protocol and cipher. Session caching
and session tickets are left on (OpenSSL's server defaults; each leaf's
SSLContext lives as long as the front).

Run alone for a manual check: tls_front.py PKI_DIR UPSTREAM_PORT [MODE]
prints `PORT <n>` and serves until stdin closes.
"""
import os
import select
import socket
import ssl
import sys
import threading
import time

MODES = ('good', 'good-ecdsa', 'wrong-ca', 'expired', 'not-yet-valid', 'close-mid-handshake',
         'stall-handshake', 'large-records')
# The leaf each certificate mode presents (files of tests/qemu/tls_pki.sh).
LEAF = {'good': 'good-rsa', 'good-ecdsa': 'good-ecdsa', 'wrong-ca': 'wrong-ca', 'expired': 'expired',
        'not-yet-valid': 'future', 'large-records': 'good-rsa', 'close-mid-handshake': 'good-rsa',
        'stall-handshake': 'good-rsa'}
LARGE_PIECE = 12 * 1024
# large-records: what the upstream sent is flushed when this much is
# buffered, when it has been quiet this long, or at its end.
LARGE_QUIET = 0.3
HELLO_BYTES = 5 + 4 + 2 + 32


class TlsFront:
    def __init__(self, pki_dir, upstream_port, log_path=None, mode='good'):
        self.pki = pki_dir
        self.upstream = ('127.0.0.1', int(upstream_port))
        self.contexts = {}
        for leaf in sorted(set(LEAF.values())):
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            # mbedTLS 2.28 speaks TLS 1.2 (and older, which stays refused).
            ctx.minimum_version = ssl.TLSVersion.TLSv1_2
            ctx.options &= ~ssl.OP_NO_TICKET
            ctx.load_cert_chain(os.path.join(pki_dir, leaf + '.pem'), os.path.join(pki_dir, leaf + '.key'))
            self.contexts[leaf] = ctx
        self.lock = threading.Lock()
        self._conns = []
        self._mode = None
        self.set_mode(mode)
        self.release_event = threading.Event()
        self.closing = False
        self.held = []   # sockets of stalled handshakes
        self.log = open(log_path, 'a') if log_path else None
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(('127.0.0.1', 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._accept_loop, daemon=True)
        self.thread.start()

    # -- control -------------------------------------------------------------
    def set_mode(self, mode):
        if mode not in MODES:
            raise ValueError('unknown TLS front mode %r' % mode)
        with self.lock:
            self._mode = mode
            if mode != 'stall-handshake':
                pass
        self.note('mode %s' % mode)

    def mode(self):
        with self.lock:
            return self._mode

    def release(self):
        """Close every stalled handshake (stall-handshake mode)."""
        with self.lock:
            held, self.held = self.held, []
        for s in held:
            try:
                s.close()
            except OSError:
                pass
        return len(held)

    def conns(self):
        with self.lock:
            return [dict(c) for c in self._conns]

    def mark(self):
        with self.lock:
            return len(self._conns)

    def since(self, mark):
        return self.conns()[mark:]

    def wait_conns(self, mark, pred, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if pred(self.since(mark)):
                return True
            time.sleep(0.1)
        return pred(self.since(mark))

    def close(self):
        self.closing = True
        try:
            self.listener.close()
        except OSError:
            pass
        self.release()
        if self.log:
            self.log.close()
            self.log = None

    def note(self, text):
        log = getattr(self, 'log', None)
        if log:
            log.write('[tls-front %.3f] %s\n' % (time.time(), text))
            log.flush()

    # -- serving -------------------------------------------------------------
    def _accept_loop(self):
        n = 0
        while not self.closing:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            n += 1
            rec = {'n': n, 'mode': self.mode(), 't': time.time(), 'random': None, 'handshake': None,
                   'handshake_ms': None, 'reused': None, 'version': None, 'cipher': None, 'error': None,
                   'bytes_up': 0, 'bytes_down': 0, 'records_down': 0}
            with self.lock:
                self._conns.append(rec)
            threading.Thread(target=self._serve, args=(sock, rec), daemon=True).start()

    def _update(self, rec, **kw):
        with self.lock:
            rec.update(kw)

    def _peek_hello(self, sock):
        """The ClientHello's random (hex), read without consuming it."""
        sock.settimeout(0.2)
        deadline = time.monotonic() + 30
        data = b''
        while time.monotonic() < deadline and not self.closing:
            try:
                data = sock.recv(512, socket.MSG_PEEK)
            except socket.timeout:
                continue
            if not data:
                return None, 'closed before the ClientHello'
            if len(data) >= HELLO_BYTES:
                break
            time.sleep(0.05)
        if len(data) < HELLO_BYTES:
            return None, 'no whole ClientHello head within 30 s (%d bytes)' % len(data)
        if data[0] != 0x16 or data[5] != 0x01:
            return None, 'not a ClientHello: %s' % data[:11].hex()
        return data[11:43].hex(), None

    def _serve(self, sock, rec):
        mode = rec['mode']
        try:
            random, err = self._peek_hello(sock)
            self._update(rec, random=random)
            if err:
                self._update(rec, handshake='none', error=err)
                sock.close()
                return
            if mode == 'close-mid-handshake':
                sock.settimeout(2)
                try:
                    sock.recv(4096)  # the ClientHello, consumed
                except OSError:
                    pass
                self._update(rec, handshake='closed by the front after the ClientHello')
                sock.close()
                return
            if mode == 'stall-handshake':
                sock.settimeout(2)
                try:
                    sock.recv(4096)
                except OSError:
                    pass
                self._update(rec, handshake='stalled by the front')
                with self.lock:
                    self.held.append(sock)
                # Held open, answering nothing, until release(); whatever the
                # board sends meanwhile is read and dropped.
                while True:
                    with self.lock:
                        if sock not in self.held:
                            break
                    try:
                        r, _, _ = select.select([sock], [], [], 0.2)
                        if r and not sock.recv(4096):
                            self._update(rec, error='the board closed the stalled connection after %.1f s'
                                         % (time.time() - rec['t']))
                            with self.lock:
                                if sock in self.held:
                                    self.held.remove(sock)
                            break
                    except (OSError, ValueError):
                        break
                sock.close()
                return
            ctx = self.contexts[LEAF[mode]]
            sock.settimeout(60)
            tls = ctx.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
            t0 = time.monotonic()
            try:
                tls.do_handshake()
            except (ssl.SSLError, OSError) as e:
                self._update(rec, handshake='failed', error='%s: %s' % (type(e).__name__, e),
                             handshake_ms=round((time.monotonic() - t0) * 1000))
                self.note('conn %d (%s): handshake failed: %s' % (rec['n'], mode, e))
                try:
                    tls.close()
                except OSError:
                    pass
                return
            ms = round((time.monotonic() - t0) * 1000)
            reused = tls.session_reused
            self._update(rec, handshake='resumed' if reused else 'full', handshake_ms=ms, reused=reused,
                         version=tls.version(), cipher=(tls.cipher() or ('?',))[0])
            self.note('conn %d (%s): %s handshake in %d ms, %s %s' % (rec['n'], mode, 'resumed' if reused
                                                                      else 'full', ms, tls.version(),
                                                                      (tls.cipher() or ('?',))[0]))
            self._pump(tls, rec, mode == 'large-records')
        except Exception as e:  # noqa: BLE001 (recorded, never raised in a thread)
            self._update(rec, error='%s: %s' % (type(e).__name__, e))
            try:
                sock.close()
            except OSError:
                pass

    def _pump(self, tls, rec, large):
        """Forward decrypted bytes both ways until either side ends."""
        try:
            up = socket.create_connection(self.upstream, timeout=10)
        except OSError as e:
            self._update(rec, error='upstream: %s' % e)
            tls.close()
            return
        up.settimeout(None)
        tls.settimeout(None)
        buf = b''
        last = time.monotonic()
        up_open = tls_open = True
        try:
            while up_open or buf:
                if tls.pending():
                    r = [tls]
                else:
                    wait = [s for s, o in ((tls, tls_open), (up, up_open)) if o]
                    r, _, _ = select.select(wait, [], [], 0.1) if wait else ([], [], [])
                if tls in r and tls_open:
                    try:
                        data = tls.recv(65536)
                    except ssl.SSLWantReadError:
                        data = None
                    except (ssl.SSLError, OSError):
                        data = b''
                    if data == b'':
                        tls_open = False
                        try:
                            up.shutdown(socket.SHUT_WR)
                        except OSError:
                            pass
                    elif data:
                        up.sendall(data)
                        self._update(rec, bytes_up=rec['bytes_up'] + len(data))
                if up in r and up_open:
                    data = up.recv(65536)
                    if not data:
                        up_open = False
                    else:
                        buf += data
                        last = time.monotonic()
                # Write what the upstream sent: at once, or in 12 KB pieces
                # in large-records mode (each write is one TLS record).
                while buf and (not large or len(buf) >= LARGE_PIECE or not up_open
                               or time.monotonic() - last >= LARGE_QUIET):
                    piece = buf[:LARGE_PIECE] if large else buf
                    tls.sendall(piece)
                    buf = buf[len(piece):]
                    with self.lock:
                        rec['bytes_down'] += len(piece)
                        rec['records_down'] += 1
                        rec['largest_write'] = max(rec.get('largest_write', 0), len(piece))
                if not tls_open and not up_open:
                    break
        except (ssl.SSLError, OSError) as e:
            self._update(rec, error='%s: %s' % (type(e).__name__, e))
        finally:
            for s in (up, tls):
                try:
                    s.close()
                except OSError:
                    pass


def summary(conns):
    """full, resumed, failed/other counts of a list of connection records."""
    full = sum(1 for c in conns if c['handshake'] == 'full')
    resumed = sum(1 for c in conns if c['handshake'] == 'resumed')
    return full, resumed, len(conns) - full - resumed


def main():
    if len(sys.argv) < 3:
        sys.exit('usage: tls_front.py PKI_DIR UPSTREAM_PORT [MODE]')
    front = TlsFront(sys.argv[1], int(sys.argv[2]), mode=sys.argv[3] if len(sys.argv) > 3 else 'good')
    print('PORT %d' % front.port, flush=True)
    sys.stdin.read()
    for c in front.conns():
        print(c)
    front.close()


if __name__ == '__main__':
    main()
