/*
 * The host port of WebNet 2.0.x: one "webnet" thread with a select() loop
 * over a listening socket on 127.0.0.1 and its sessions, as WebNet's
 * webnet.c and wn_session.c have it, serving only the CGI module (the host
 * has no web root).
 *
 * What it keeps from WebNet's sources, because code that works here must
 * work there:
 * - one thread: a CGI handler that blocks holds up every other session;
 * - a request is parsed in phases (method, header, body) as bytes arrive;
 *   methods, header names and the Connection value are matched
 *   case-insensitively, by prefix (WebNet's str_begin_with is strncasecmp:
 *   "content-length: 2" counts, as the real firmware showed);
 * - a request without a Connection header is WEBNET_CONN_CLOSE (the request
 *   is zeroed), so a head with a length says "Connection: close"; any
 *   Connection header but "close" makes it "Keep-Alive" (the session is
 *   closed after the answer either way);
 * - a POST with a Content-Length and no Content-Type header crashes WebNet
 *   2.0.3: webnet_request_parse_header passes the NULL content_type to
 *   str_begin_with (a data abort on the qemu-vexpress-a9 board,
 *   tests/qemu/run.sh --webnet; a read of address 0 on a Cortex-M). The
 *   host port cannot take the process down for it, so it says so on stderr
 *   and drops the connection without an answer: a client that works here
 *   sends a Content-Type with every body;
 * - a POST body is read only when it is not multipart and shorter than
 *   8 KB (POST_BUFSZ_MAX); it lands NUL-terminated in request->query. A
 *   longer one is left unread and the handler sees query NULL with
 *   content_length set; form-urlencoded bodies are also split into query
 *   items;
 * - every session is closed once its handler returns, and if
 *   request->result_code is not 200 by then, WebNet's HTML error page is sent
 *   after whatever the handler wrote;
 * - an unregistered /cgi-bin/ name is a 404; other paths (files) too;
 * - webnet_session_write is one send() whose result is ignored;
 * - webnet_session_printf formats into the 4 KB session buffer.
 * Sockets use MSG_NOSIGNAL: lwIP has no SIGPIPE.
 */
#include <rtthread.h>
#include <webnet.h>
#include <wn_module.h>
#include <rt_host.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

#define POST_BUFSZ_MAX (8 * 1024)
#define WEBNET_CONN_MAX 16

struct webnet_session_ops
{
    void (*session_handle)(struct webnet_session *session, int event);
    void (*session_close)(struct webnet_session *session);
};

struct cgi_item
{
    const char *name;
    void (*handler)(struct webnet_session *session);
};

static struct cgi_item *cgi_items;
static unsigned cgi_count;
static char cgi_root[64] = "/cgi-bin/";
static int webnet_port = 80;
static int bound_port = -1;
static rt_bool_t init_ok = RT_FALSE;
static const char *web_root = "/webnet";
static struct webnet_session *session_list;

/* WebNet's str_begin_with: a case-insensitive prefix. (WebNet's own does
 * not check for NULL; the one caller that can pass NULL is handled where it
 * happens, in parse_header.) */
static rt_bool_t begins(const char *s, const char *prefix)
{
    return s != RT_NULL && strncasecmp(s, prefix, strlen(prefix)) == 0;
}

void webnet_set_port(int port)
{
    RT_ASSERT(init_ok == RT_FALSE);
    webnet_port = port;
}

int webnet_get_port(void)
{
    return webnet_port;
}

int rt_host_webnet_bound_port(void)
{
    return bound_port;
}

void webnet_set_root(const char *webroot_path)
{
    web_root = webroot_path;
}

const char *webnet_get_root(void)
{
    return web_root;
}

void webnet_cgi_register(const char *name, void (*handler)(struct webnet_session *session))
{
    struct cgi_item *grown = rt_realloc(cgi_items, sizeof(*cgi_items) * (cgi_count + 1));
    RT_ASSERT(grown != RT_NULL);
    cgi_items = grown;
    cgi_items[cgi_count].name = name;
    cgi_items[cgi_count].handler = handler;
    cgi_count++;
}

void webnet_cgi_set_root(const char *root)
{
    snprintf(cgi_root, sizeof(cgi_root), "%s%s", root, root[strlen(root) - 1] == '/' ? "" : "/");
}

/* ---- requests ---- */

static void urldecode(char *s)
{
    char *out = s;
    if (s == RT_NULL)
        return;
    for (; *s; s++)
    {
        if (*s == '+')
            *out++ = ' ';
        else if (*s == '%' && s[1] && s[2])
        {
            char hex[3] = {s[1], s[2], 0};
            *out++ = (char)strtol(hex, RT_NULL, 16);
            s += 2;
        }
        else
            *out++ = *s;
    }
    *out = '\0';
}

/* Split request->query into name=value items, decoding the values. */
static void parse_query(struct webnet_request *request)
{
    char *p;
    unsigned n = 1, i = 0;
    if (request->query == RT_NULL || request->query[0] == '\0')
        return;
    for (p = request->query; *p; p++)
        if (*p == '&')
            n++;
    request->query_items = rt_malloc(sizeof(struct webnet_query_item) * n);
    if (request->query_items == RT_NULL)
    {
        request->result_code = 500;
        return;
    }
    for (p = request->query; p && *p && i < n;)
    {
        char *amp = strchr(p, '&');
        char *eq;
        if (amp)
            *amp = '\0';
        request->query_items[i].name = p;
        eq = strchr(p, '=');
        request->query_items[i].value = RT_NULL;
        if (eq)
        {
            *eq = '\0';
            request->query_items[i].value = eq + 1;
            urldecode(eq + 1);
        }
        if (*p)
            i++;
        p = amp ? amp + 1 : RT_NULL;
    }
    request->query_counter = (rt_uint16_t)i;
}

rt_bool_t webnet_request_has_query(struct webnet_request *request, char *name)
{
    unsigned i;
    for (i = 0; i < request->query_counter; i++)
        if (strncmp(request->query_items[i].name, name, strlen(name)) == 0)
            return RT_TRUE;
    return RT_FALSE;
}

const char *webnet_request_get_query(struct webnet_request *request, char *name)
{
    unsigned i;
    for (i = 0; i < request->query_counter; i++)
        if (strcmp(request->query_items[i].name, name) == 0)
            return request->query_items[i].value;
    return RT_NULL;
}

static void request_destroy(struct webnet_request *request)
{
    if (request == RT_NULL)
        return;
    rt_free(request->path);
    rt_free(request->host);
    rt_free(request->authorization);
    rt_free(request->user_agent);
    rt_free(request->accept_language);
    rt_free(request->cookie);
    rt_free(request->referer);
    rt_free(request->content_type);
    rt_free(request->query);
    rt_free(request->query_items);
    rt_free(request);
}

static const struct
{
    const char *word;
    enum webnet_method method;
} methods[] = {
    {"GET ", WEBNET_GET},         {"POST ", WEBNET_POST},         {"HEADER ", WEBNET_HEADER},
    {"HEAD ", WEBNET_HEAD},       {"PUT ", WEBNET_PUT},           {"OPTIONS ", WEBNET_OPTIONS},
    {"PROPFIND ", WEBNET_PROPFIND}, {"PROPPATCH ", WEBNET_PROPPATCH}, {"DELETE ", WEBNET_DELETE},
    {"CONNECT ", WEBNET_CONNECT}, {"MKCOL ", WEBNET_MKCOL},       {"MOVE ", WEBNET_MOVE},
    {"SUBSCRIBE ", WEBNET_SUBSCRIBE}, {"UNSUBSCRIBE ", WEBNET_UNSUBSCRIBE}, {"NOTIFY ", WEBNET_NOTIFY},
};

/* The request line; returns the bytes used, 0 while it is incomplete. An
 * unknown method sets 501 and leaves the phase as it is (WebNet then waits
 * for the client to close). */
static int parse_method(struct webnet_request *request, char *buf)
{
    char *end = strstr(buf, "\r\n"), *p = buf, *sp, *q;
    unsigned i;
    if (end == RT_NULL)
        return 0;
    for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
        if (begins(p, methods[i].word))
            break;
    if (i == sizeof(methods) / sizeof(methods[0]))
    {
        request->result_code = 501;
        return 0;
    }
    request->method = methods[i].method;
    p += strlen(methods[i].word);
    sp = strchr(p, ' ');
    if (sp == RT_NULL || sp > end)
    {
        request->result_code = 400;
        return (int)(p - buf);
    }
    *sp = '\0';
    request->path = rt_strdup(p);
    q = request->path ? strchr(request->path, '?') : RT_NULL;
    if (q)
    {
        *q++ = '\0';
        request->query = rt_strdup(q);
        parse_query(request);
    }
    if (!begins(sp + 1, "HTTP/1"))
    {
        request->result_code = 501;
        return (int)(sp + 1 - buf);
    }
    end[0] = end[1] = '\0';
    request->session->session_phase = WEB_PHASE_HEADER;
    return (int)(end + 2 - buf);
}

static char *field(char *line, size_t skip)
{
    line += skip;
    while (*line == ' ')
        line++;
    return rt_strdup(line);
}

static int parse_header(struct webnet_request *request, char *buf)
{
    char *p = buf;
    struct webnet_session *session = request->session;
    for (;;)
    {
        char *end;
        if (begins(p, "\r\n"))
        {
            p += 2;
            if (request->content_length && request->method == WEBNET_POST)
            {
                if (request->content_type == RT_NULL)
                {
                    /* WebNet 2.0.3 dereferences NULL here (see the top). */
                    fprintf(stderr, "webnet host port: a POST with a body and no Content-Type: WebNet 2.0.3 "
                                    "dereferences a NULL pointer here (the board crashes); connection dropped\n");
                    session->session_phase = WEB_PHASE_CLOSE;
                    break;
                }
                session->session_phase = WEB_PHASE_RESPONSE;
                if (!begins(request->content_type, "multipart/form-data") &&
                    request->content_length < POST_BUFSZ_MAX)
                {
                    session->session_phase = WEB_PHASE_QUERY;
                    rt_free(request->query);
                    rt_free(request->query_items);
                    request->query_items = RT_NULL;
                    request->query_counter = 0;
                    request->query = rt_malloc(request->content_length + 1);
                    RT_ASSERT(request->query != RT_NULL);
                    memset(request->query, 0, request->content_length + 1);
                    request->query_offset = 0;
                }
            }
            else
            {
                request->result_code = 200;
                session->session_phase = WEB_PHASE_RESPONSE;
            }
            break;
        }
        end = strstr(p, "\r\n");
        if (*p == '\0' || end == RT_NULL)
            break;
        end[0] = end[1] = '\0';
        if (begins(p, "Host:"))
            request->host = field(p, 5);
        else if (begins(p, "User-Agent:"))
            request->user_agent = field(p, 11);
        else if (begins(p, "Accept-Language:"))
            request->accept_language = field(p, 16);
        else if (begins(p, "Content-Length:"))
            request->content_length = atoi(p + 15);
        else if (begins(p, "Content-Type:"))
            request->content_type = field(p, 13);
        else if (begins(p, "Referer:"))
            request->referer = field(p, 8);
        else if (begins(p, "Connection:"))
        {
            char *v = p + 11;
            while (*v == ' ')
                v++;
            /* Any Connection header means keep-alive unless it says close. */
            request->connection = WEBNET_CONN_KEEPALIVE;
            if (begins(v, "close"))
                request->connection = WEBNET_CONN_CLOSE;
            else if (begins(v, "Keep-Alive"))
                request->connection = WEBNET_CONN_KEEPALIVE;
        }
        else if (begins(p, "Cookie:"))
            request->cookie = field(p, 7);
        else if (begins(p, "Authorization: Basic"))
            request->authorization = field(p, 20);
        p = end + 2;
    }
    return (int)(p - buf);
}

static int parse_post(struct webnet_request *request, char *buf, int length)
{
    if (request->query && length)
    {
        if (request->query_offset + length > request->content_length)
            length = request->content_length - request->query_offset;
        memcpy(&request->query[request->query_offset], buf, length);
        request->query_offset += length;
        if (request->query_offset == request->content_length)
        {
            if (begins(request->content_type, "application/x-www-form-urlencoded"))
                parse_query(request);
            request->result_code = 200;
            request->session->session_phase = WEB_PHASE_RESPONSE;
        }
    }
    return length;
}

/* ---- sessions ---- */

int webnet_session_read(struct webnet_session *session, char *buffer, int length)
{
    int n = (int)recv(session->socket, buffer, length, 0);
    if (n <= 0)
    {
        session->session_phase = WEB_PHASE_CLOSE;
        return -1;
    }
    return n;
}

int webnet_session_write(struct webnet_session *session, const rt_uint8_t *data, rt_size_t size)
{
    (void)send(session->socket, data, size, MSG_NOSIGNAL);
    return (int)size;
}

void webnet_session_printf(struct webnet_session *session, const char *fmt, ...)
{
    va_list args;
    int length;
    va_start(args, fmt);
    length = vsnprintf((char *)session->buffer, sizeof(session->buffer) - 1, fmt, args);
    va_end(args);
    if (length < 0 || length >= (int)sizeof(session->buffer) - 1)
    {
        /* WebNet would send past its buffer and write a NUL beyond it. */
        fprintf(stderr, "webnet host port: webnet_session_printf of %d bytes overruns WebNet's "
                        "%d-byte session buffer\n", length, (int)sizeof(session->buffer));
        abort();
    }
    (void)send(session->socket, session->buffer, length, MSG_NOSIGNAL);
}

void webnet_session_set_header_status_line(struct webnet_session *session, int code,
                                           const char *reason_phrase)
{
    char status_line[16];
    rt_snprintf(status_line, sizeof(status_line) - 1, "HTTP/1.1 %d ", code);
    webnet_session_printf(session, "%s", status_line);
    webnet_session_printf(session, "%s", reason_phrase);
    webnet_session_printf(session, "\r\n");
    webnet_session_printf(session, WEBNET_SERVER);
}

void webnet_session_set_header(struct webnet_session *session, const char *mimetype, int code,
                               const char *title, int length)
{
    char *ptr = (char *)session->buffer;
    char *end = (char *)session->buffer + session->buffer_length;
    ptr += rt_snprintf(ptr, end - ptr, "HTTP/1.1 %d %s\r\n%s", code, title, WEBNET_SERVER);
    if (code == 401)
        ptr += rt_snprintf(ptr, end - ptr, "WWW-Authenticate: Basic realm=%s\r\n",
                           session->request->host);
    if (length >= 0)
        ptr += rt_snprintf(ptr, end - ptr, "Content-Type: %s\r\nContent-Length: %ld\r\nConnection: %s\r\n\r\n",
                           mimetype, (long)length,
                           session->request->connection == WEBNET_CONN_CLOSE ? "close" : "Keep-Alive");
    else
        ptr += rt_snprintf(ptr, end - ptr, "Content-Type: %s\r\nConnection: %s\r\n\r\n", mimetype, "close");
    webnet_session_write(session, session->buffer, ptr - (char *)session->buffer);
}

static void bad_request(struct webnet_session *session, int code)
{
    const char *title = "Unknown";
    switch (code)
    {
    case 400: title = "Bad Request"; break;
    case 403: title = "Forbidden"; break;
    case 404: title = "Not Found"; break;
    case 405: title = "Method Not Allowed"; break;
    case 500: title = "Internal Server Error"; break;
    case 501: title = "Not Implemented"; break;
    }
    if (code >= 400)
        session->request->connection = WEBNET_CONN_CLOSE;
    webnet_session_set_header(session, "text/html", code, title, -1);
    webnet_session_printf(session, "<html><head><title>%d %s</title></head><body>%d %s</body></html>\r\n",
                          code, title, code, title);
}

/* The CGI module, then (no web root on the host) 404. */
static void handle_uri(struct webnet_session *session)
{
    struct webnet_request *request = session->request;
    char *cgi = request->path ? strstr(request->path, cgi_root) : RT_NULL;
    if (cgi != RT_NULL)
    {
        const char *name = cgi + strlen(cgi_root);
        unsigned i;
        for (i = 0; i < cgi_count; i++)
            if (strlen(name) == strlen(cgi_items[i].name) &&
                strncasecmp(name, cgi_items[i].name, strlen(name)) == 0)
            {
                cgi_items[i].handler(session);
                return;
            }
    }
    request->result_code = 404;
}

static void drop_used(struct webnet_session *session, int used)
{
    if (used <= 0)
        return;
    if (used < session->buffer_offset)
    {
        session->buffer_offset -= used;
        memmove(session->buffer, &session->buffer[used], session->buffer_offset);
    }
    else
        session->buffer_offset = 0;
}

static void session_close(struct webnet_session *session)
{
    struct webnet_session **it;
    close(session->socket);
    for (it = &session_list; *it; it = &(*it)->next)
        if (*it == session)
        {
            *it = session->next;
            break;
        }
    request_destroy(session->request);
    rt_free(session);
}

void webnet_session_close(struct webnet_session *session)
{
    session_close(session);
}

/* One readable event: read, parse what there is, and answer once the request
 * is complete. Returns RT_TRUE when the session is to be closed. */
static rt_bool_t session_readable(struct webnet_session *session)
{
    struct webnet_request *request = session->request;
    int n;
    if (request == RT_NULL)
    {
        request = rt_calloc(1, sizeof(*request));
        if (request == RT_NULL)
            return RT_TRUE;
        request->session = session;
        request->result_code = 200;
        /* webnet_request_create zeroes the request: WEBNET_CONN_CLOSE, so
         * without a Connection header the head says "Connection: close". */
        request->connection = WEBNET_CONN_CLOSE;
        session->request = request;
        session->session_phase = WEB_PHASE_METHOD;
    }
    if (session->buffer_offset >= session->buffer_length - 1)
        return RT_TRUE; /* a header that fills the whole buffer */
    n = webnet_session_read(session, (char *)&session->buffer[session->buffer_offset],
                            session->buffer_length - 1 - session->buffer_offset);
    if (n > 0)
        session->buffer_offset += n;
    session->buffer[session->buffer_offset] = '\0';
    if (session->session_phase == WEB_PHASE_METHOD)
        drop_used(session, parse_method(request, (char *)session->buffer));
    if (session->session_phase == WEB_PHASE_HEADER)
        drop_used(session, parse_header(request, (char *)session->buffer));
    if (session->session_phase == WEB_PHASE_QUERY)
        drop_used(session, parse_post(request, (char *)session->buffer, session->buffer_offset));
    if (session->session_phase == WEB_PHASE_RESPONSE)
    {
        handle_uri(session);
        if (session->request->result_code != 200)
            bad_request(session, session->request->result_code);
        return RT_TRUE;
    }
    return session->session_phase == WEB_PHASE_CLOSE;
}

static void webnet_thread(void *parameter)
{
    int listenfd = (int)(long)parameter;
    for (;;)
    {
        fd_set readset;
        struct webnet_session *s, *next;
        int maxfd = listenfd;
        FD_ZERO(&readset);
        FD_SET(listenfd, &readset);
        for (s = session_list; s; s = s->next)
        {
            FD_SET(s->socket, &readset);
            if (s->socket > maxfd)
                maxfd = s->socket;
        }
        if (select(maxfd + 1, &readset, RT_NULL, RT_NULL, RT_NULL) < 0)
        {
            if (errno == EINTR)
                continue;
            break;
        }
        if (FD_ISSET(listenfd, &readset))
        {
            struct webnet_session *session = rt_calloc(1, sizeof(*session));
            socklen_t len = sizeof(struct sockaddr_in);
            int fd = accept(listenfd, (struct sockaddr *)(session ? &session->cliaddr : RT_NULL),
                            session ? &len : RT_NULL);
            if (fd >= 0 && session != RT_NULL && fd < FD_SETSIZE)
            {
                session->socket = fd;
                session->buffer_length = WEBNET_SESSION_BUFSZ;
                session->next = session_list;
                session_list = session;
            }
            else
            {
                if (fd >= 0)
                    close(fd);
                rt_free(session);
            }
        }
        for (s = session_list; s; s = next)
        {
            next = s->next;
            if (FD_ISSET(s->socket, &readset) && session_readable(s))
                session_close(s);
        }
    }
    close(listenfd);
}

int webnet_init(void)
{
    struct sockaddr_in addr;
    socklen_t len = sizeof(addr);
    int one = 1;
    int fd;
    rt_thread_t tid;
    if (init_ok)
    {
        rt_kprintf("webnet is already initialized.\n");
        return 0;
    }
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons((unsigned short)webnet_port);
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, WEBNET_CONN_MAX) < 0 ||
        getsockname(fd, (struct sockaddr *)&addr, &len) < 0)
    {
        rt_kprintf("webnet: cannot listen on 127.0.0.1:%d: %s\n", webnet_port, strerror(errno));
        close(fd);
        return -1;
    }
    bound_port = ntohs(addr.sin_port);
    tid = rt_thread_create(WEBNET_THREAD_NAME, webnet_thread, (void *)(long)fd, WEBNET_THREAD_STACKSIZE,
                           WEBNET_PRIORITY, 5);
    if (tid == RT_NULL)
    {
        close(fd);
        return -1;
    }
    init_ok = RT_TRUE;
    rt_thread_startup(tid);
    return 0;
}
