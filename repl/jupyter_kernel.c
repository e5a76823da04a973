/*
** jupyter_kernel.c — the Jupyter kernel (see jupyter_kernel.h).
**
** One VM runs every cell on the main thread, which also serves the shell and
** control sockets between cells. The heartbeat echoes on its own thread.
** File descriptors 1 and 2 are pipes for the kernel's life so that every
** print reaches the notebook: the host's, and a CPU-device kernel's. A
** reader thread publishes stdout as stream messages while the cell runs;
** stderr is kept until the cell ends, when a traceback there becomes the
** error reply. SIGINT (interrupt_mode "signal") raises KeyboardInterrupt in
** the running cell through the command's usual handler.
*/
#include "jupyter_kernel.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "entry_scan.h"
#include "jupyter_json.h"
#include "repl_helpers.h"
#include "signals.h"

typedef struct Kernel {
    VM *vm;
    void *ctx, *shell, *control, *iopub, *stdin_sock, *hb;
    char key[256];
    size_t key_len;
    char session[40];
    long execution_count;
    /* the request being served: identities and header, for replies and iopub */
    JBuf parent;       /* the request's header JSON */
    zmq_msg_t *idents; /* routing frames of the request */
    int nidents;
    pthread_mutex_t iopub_lock;
    /* fd 1 reader */
    int out_pipe, err_pipe, log_fd;
    bool reader_busy, in_cell;
    JBuf err_text;     /* stderr of the cell */
    JBuf result;       /* repr of the cell's last expression */
    bool has_result;
    bool quit;
} Kernel;

static Kernel *the_kernel;

static void make_uuid(char out[33]) {
    unsigned char r[16] = {0};
    FILE *f = fopen("/dev/urandom", "rb");
    if (f) {
        if (fread(r, 1, 16, f) != 16) memset(r, 0, 16);
        fclose(f);
    }
    static unsigned counter;
    r[0] ^= (unsigned char)counter++;
    for (int i = 0; i < 16; i++) snprintf(out + 2 * i, 3, "%02x", r[i]);
}

static void sign(Kernel *k, const JBuf *parts[4], char hex[65]) {
    hex[0] = '\0';
    if (k->key_len == 0) return;
    /* HMAC over header, parent header, metadata and content, as the protocol says */
    JBuf all = {0};
    for (int i = 0; i < 4; i++) jb_putn(&all, parts[i]->s ? parts[i]->s : "", parts[i]->len);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    HMAC(EVP_sha256(), k->key, (int)k->key_len, (const unsigned char *)all.s, all.len, md, &mdlen);
    jb_free(&all);
    for (size_t i = 0; i < mdlen && i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

/* Sends a message of msg_type with content on sock (to the request's identities when route). */
static void send_msg(Kernel *k, void *sock, bool route, const char *msg_type, const char *content) {
    char id[33];
    make_uuid(id);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char date[64];
    snprintf(date, sizeof date, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000);
    JBuf header = {0}, parent = {0}, meta = {0}, body = {0};
    jb_printf(&header,
              "{\"msg_id\":\"%s\",\"session\":\"%s\",\"username\":\"gpy\",\"date\":\"%s\","
              "\"msg_type\":\"%s\",\"version\":\"5.3\"}",
              id, k->session, date, msg_type);
    jb_puts(&parent, k->parent.len ? k->parent.s : "{}");
    jb_puts(&meta, "{}");
    jb_puts(&body, content);
    const JBuf *parts[4] = {&header, &parent, &meta, &body};
    char hex[65];
    sign(k, parts, hex);
    if (route) {
        for (int i = 0; i < k->nidents; i++)
            zmq_send(sock, zmq_msg_data(&k->idents[i]), zmq_msg_size(&k->idents[i]), ZMQ_SNDMORE);
    } else {
        zmq_send(sock, msg_type, strlen(msg_type), ZMQ_SNDMORE); /* iopub topic */
    }
    zmq_send(sock, "<IDS|MSG>", 9, ZMQ_SNDMORE);
    zmq_send(sock, hex, strlen(hex), ZMQ_SNDMORE);
    for (int i = 0; i < 4; i++) zmq_send(sock, parts[i]->s, parts[i]->len, i == 3 ? 0 : ZMQ_SNDMORE);
    jb_free(&header);
    jb_free(&parent);
    jb_free(&meta);
    jb_free(&body);
}

static void publish(Kernel *k, const char *msg_type, const char *content) {
    pthread_mutex_lock(&k->iopub_lock);
    send_msg(k, k->iopub, false, msg_type, content);
    pthread_mutex_unlock(&k->iopub_lock);
}

static void status(Kernel *k, const char *state) {
    char c[64];
    snprintf(c, sizeof c, "{\"execution_state\":\"%s\"}", state);
    publish(k, "status", c);
}

static void stream(Kernel *k, const char *name, const char *text, size_t n) {
    JBuf c = {0};
    jb_printf(&c, "{\"name\":\"%s\",\"text\":", name);
    jb_str(&c, text, n);
    jb_puts(&c, "}");
    publish(k, "stream", c.s);
    jb_free(&c);
}

/* ------------------------------------------------------------ captured output */

/* stdout while a cell runs: published as it comes; stderr: kept for the cell's end */
static void *reader_main(void *ud) {
    Kernel *k = ud;
    struct pollfd p[2] = {{.fd = k->out_pipe, .events = POLLIN}, {.fd = k->err_pipe, .events = POLLIN}};
    char buf[65536];
    for (;;) {
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return NULL;
        }
        for (int i = 0; i < 2; i++) {
            if (!(p[i].revents & (POLLIN | POLLHUP))) continue;
            pthread_mutex_lock(&k->iopub_lock);
            k->reader_busy = true;
            bool in_cell = k->in_cell;
            pthread_mutex_unlock(&k->iopub_lock);
            ssize_t n = read(p[i].fd, buf, sizeof buf);
            if (n <= 0) return NULL;
            if (i == 0 && in_cell) stream(k, "stdout", buf, (size_t)n);
            else if (i == 1 && in_cell) {
                pthread_mutex_lock(&k->iopub_lock);
                jb_putn(&k->err_text, buf, (size_t)n);
                pthread_mutex_unlock(&k->iopub_lock);
            } else if (write(k->log_fd, buf, (size_t)n) < 0) { /* between cells: the kernel's log */
            }
            pthread_mutex_lock(&k->iopub_lock);
            k->reader_busy = false;
            pthread_mutex_unlock(&k->iopub_lock);
        }
    }
}

static bool pipe_empty(int fd) {
    int n = 0;
    return ioctl(fd, FIONREAD, &n) == 0 && n == 0;
}

/* Waits until everything the cell wrote has been read by the reader thread. */
static void drain_output(Kernel *k) {
    fflush(stdout);
    fflush(stderr);
    for (;;) {
        pthread_mutex_lock(&k->iopub_lock);
        bool done = !k->reader_busy && pipe_empty(k->out_pipe) && pipe_empty(k->err_pipe);
        pthread_mutex_unlock(&k->iopub_lock);
        if (done) return;
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
}

static void flush_body(VM *vm, void *ud) {
    (void)ud;
    vm_stream_flush(vm, vm->sys_stdout);
    vm_stream_flush(vm, vm->sys_stderr);
}

static void on_print_expr(VM *vm, Str *repr) {
    (void)vm;
    Kernel *k = the_kernel;
    k->result.len = 0;
    jb_putn(&k->result, repr->chars, (size_t)repr->len);
    k->has_result = true;
}

/* ------------------------------------------------------------------ requests */

static void reply(Kernel *k, void *sock, const char *msg_type, const char *content) {
    send_msg(k, sock, true, msg_type, content);
}

static void kernel_info(Kernel *k, void *sock) {
    JBuf c = {0};
    jb_printf(&c,
              "{\"status\":\"ok\",\"protocol_version\":\"5.3\",\"implementation\":\"gpy\","
              "\"implementation_version\":\"%s\",\"language_info\":{\"name\":\"gpy\",\"version\":\"%s\","
              "\"mimetype\":\"text/x-python\",\"file_extension\":\".gpy\",\"pygments_lexer\":\"python3\","
              "\"codemirror_mode\":\"python\"},\"banner\":\"gpy %s\",\"help_links\":[]}",
              GPY_VERSION, GPY_VERSION, GPY_VERSION);
    reply(k, sock, "kernel_info_reply", c.s);
    jb_free(&c);
}

/* Runs a cell: lines starting with % are the prompt's magics, the rest gpy source. */
static int run_cell(Kernel *k, const char *code) {
    const char *p = code;
    while (*p == ' ' || *p == '\n' || *p == '\t') p++;
    if (*p != '%') return vm_run_interactive(k->vm, code, strlen(code));
    int rc = 0;
    char *copy = strdup(p);
    for (char *line = strtok(copy, "\n"); line && rc == 0; line = strtok(NULL, "\n"))
        if (!is_blank_line(line)) rc = line[0] == '%' ? repl_run_magic(k->vm, line) : vm_run_interactive(k->vm, line, strlen(line));
    free(copy);
    return rc;
}

/* The traceback's last line "Name: value" gives ename and evalue. */
static void error_content(Kernel *k, JBuf *c, const char *tb, size_t n) {
    (void)k;
    while (n > 0 && tb[n - 1] == '\n') n--;
    size_t last = n;
    while (last > 0 && tb[last - 1] != '\n') last--;
    const char *line = tb + last;
    size_t llen = n - last;
    const char *colon = memchr(line, ':', llen);
    size_t elen = colon ? (size_t)(colon - line) : llen;
    jb_puts(c, "{\"status\":\"error\",\"ename\":");
    jb_str(c, line, elen);
    jb_puts(c, ",\"evalue\":");
    if (colon) {
        const char *v = colon + 1;
        if (v < line + llen && *v == ' ') v++;
        jb_str(c, v, (size_t)(line + llen - v));
    } else {
        jb_str(c, "", 0);
    }
    jb_puts(c, ",\"traceback\":[");
    size_t s = 0;
    bool first = true;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || tb[i] == '\n') {
            if (!first) jb_puts(c, ",");
            jb_str(c, tb + s, i - s);
            first = false;
            s = i + 1;
        }
    }
    jb_puts(c, "]");
}

static void execute(Kernel *k, void *sock, const char *content, size_t clen) {
    char *code = json_find_string(content, clen, "code");
    if (!code) code = strdup("");
    bool silent = json_find_bool(content, clen, "silent", false);
    bool store = json_find_bool(content, clen, "store_history", !silent) && !silent;
    if (store) k->execution_count++;
    long count = k->execution_count;
    if (!silent) {
        JBuf c = {0};
        jb_puts(&c, "{\"code\":");
        jb_str(&c, code, strlen(code));
        jb_printf(&c, ",\"execution_count\":%ld}", count);
        publish(k, "execute_input", c.s);
        jb_free(&c);
    }
    pthread_mutex_lock(&k->iopub_lock);
    k->err_text.len = 0;
    k->has_result = false;
    k->in_cell = true;
    pthread_mutex_unlock(&k->iopub_lock);
    vm_clear_interrupt(k->vm); /* one that came while idle */
    int rc = run_cell(k, code);
    vm_pcall(k->vm, flush_body, NULL);
    drain_output(k);
    pthread_mutex_lock(&k->iopub_lock);
    k->in_cell = false;
    pthread_mutex_unlock(&k->iopub_lock);
    if (k->vm->exit_requested) k->quit = true;
    JBuf c = {0};
    /* the traceback starts at its header; what stderr got before it is a stream */
    const char *tb = k->err_text.s ? k->err_text.s : "";
    size_t tlen = k->err_text.len, tstart = 0;
    if (rc != 0 && !k->vm->exit_requested) {
        const char *h = NULL;
        for (const char *q = tb; (q = strstr(q, "Traceback (most recent call last):")); q++) h = q;
        if (h) tstart = (size_t)(h - tb);
    } else {
        tstart = tlen;
    }
    if (tstart > 0 && !silent) stream(k, "stderr", tb, tstart);
    if (rc != 0 && !k->vm->exit_requested) {
        JBuf e = {0};
        error_content(k, &e, tb + tstart, tlen - tstart);
        jb_puts(&e, "}");
        if (!silent) publish(k, "error", e.s);
        e.len -= 1;
        jb_printf(&e, ",\"execution_count\":%ld}", count);
        jb_puts(&c, e.s);
        jb_free(&e);
    } else {
        if (k->has_result && !silent) {
            JBuf r = {0};
            jb_printf(&r, "{\"execution_count\":%ld,\"data\":{\"text/plain\":", count);
            jb_str(&r, k->result.s, k->result.len);
            jb_puts(&r, "},\"metadata\":{}}");
            publish(k, "execute_result", r.s);
            jb_free(&r);
        }
        jb_printf(&c, "{\"status\":\"ok\",\"execution_count\":%ld,\"payload\":[],\"user_expressions\":{}}", count);
    }
    reply(k, sock, "execute_reply", c.s);
    jb_free(&c);
    free(code);
}

static void complete(Kernel *k, void *sock, const char *content, size_t clen) {
    char *code = json_find_string(content, clen, "code");
    if (!code) code = strdup("");
    size_t len = strlen(code);
    long cur = json_find_int(content, clen, "cursor_pos", (long)len);
    /* cursor_pos counts code points: walk UTF-8 to the byte offset */
    size_t byte = 0;
    for (long cp = 0; byte < len && cp < cur; cp++) {
        byte++;
        while (byte < len && ((unsigned char)code[byte] & 0xC0) == 0x80) byte++;
    }
    ReplCompletion rc = {0};
    JBuf c = {0};
    jb_puts(&c, "{\"status\":\"ok\",\"matches\":[");
    size_t start = byte, line = byte; /* the completer sees the cursor's line */
    while (line > 0 && code[line - 1] != '\n') line--;
    if (repl_complete(k->vm, code + line, byte - line, &rc)) {
        start = line + rc.start;
        for (size_t i = 0; i < rc.count; i++) {
            if (i) jb_puts(&c, ",");
            jb_str(&c, rc.names[i], strlen(rc.names[i]));
        }
        repl_completion_free(&rc);
    }
    long start_cp = 0;
    for (size_t i = 0; i < start; i++)
        if (((unsigned char)code[i] & 0xC0) != 0x80) start_cp++;
    jb_printf(&c, "],\"cursor_start\":%ld,\"cursor_end\":%ld,\"metadata\":{}}", start_cp, cur);
    reply(k, sock, "complete_reply", c.s);
    jb_free(&c);
    free(code);
}

static void is_complete(Kernel *k, void *sock, const char *content, size_t clen) {
    char *code = json_find_string(content, clen, "code");
    if (!code) code = strdup("");
    size_t len = strlen(code);
    EntryState st = scan_entry(code, len);
    const char *last = code + len;
    while (last > code && last[-1] != '\n') last--;
    const char *r;
    if (has_final_error(code, len)) r = "{\"status\":\"invalid\"}";
    else if (st.open) r = "{\"status\":\"incomplete\",\"indent\":\"\"}";
    else if (st.block && !is_blank_line(last)) r = "{\"status\":\"incomplete\",\"indent\":\"    \"}";
    else r = "{\"status\":\"complete\"}";
    reply(k, sock, "is_complete_reply", r);
    free(code);
}

/* Reads one message from a ROUTER socket, checks its signature, and answers it. */
static void serve(Kernel *k, void *sock) {
    zmq_msg_t frames[64];
    int n = 0;
    int more = 1;
    while (more && n < 64) {
        zmq_msg_init(&frames[n]);
        if (zmq_msg_recv(&frames[n], sock, 0) < 0) {
            zmq_msg_close(&frames[n]);
            break;
        }
        more = zmq_msg_more(&frames[n]);
        n++;
    }
    while (more) { /* too many frames: drop the rest */
        zmq_msg_t extra;
        zmq_msg_init(&extra);
        if (zmq_msg_recv(&extra, sock, 0) < 0) more = 0;
        else more = zmq_msg_more(&extra);
        zmq_msg_close(&extra);
    }
    int delim = -1;
    for (int i = 0; i < n; i++)
        if (zmq_msg_size(&frames[i]) == 9 && memcmp(zmq_msg_data(&frames[i]), "<IDS|MSG>", 9) == 0) {
            delim = i;
            break;
        }
    if (delim < 0 || n < delim + 6) goto done; /* malformed: ignored */
    {
        JBuf parts[4] = {{0}};
        for (int i = 0; i < 4; i++) jb_putn(&parts[i], zmq_msg_data(&frames[delim + 2 + i]), zmq_msg_size(&frames[delim + 2 + i]));
        const JBuf *pp[4] = {&parts[0], &parts[1], &parts[2], &parts[3]};
        char hex[65];
        sign(k, pp, hex);
        size_t slen = zmq_msg_size(&frames[delim + 1]);
        bool ok = k->key_len == 0 ||
                  (slen == strlen(hex) && CRYPTO_memcmp(hex, zmq_msg_data(&frames[delim + 1]), slen) == 0);
        if (!ok) {
            dprintf(k->log_fd, "gpy kernel: a message with a wrong signature was dropped\n");
        } else {
            char *type = json_find_string(parts[0].s, parts[0].len, "msg_type");
            k->parent.len = 0;
            jb_putn(&k->parent, parts[0].s, parts[0].len);
            k->idents = frames;
            k->nidents = delim;
            status(k, "busy");
            const char *c = parts[3].s;
            size_t cl = parts[3].len;
            if (!type) {
            } else if (strcmp(type, "kernel_info_request") == 0) kernel_info(k, sock);
            else if (strcmp(type, "execute_request") == 0) execute(k, sock, c, cl);
            else if (strcmp(type, "complete_request") == 0) complete(k, sock, c, cl);
            else if (strcmp(type, "is_complete_request") == 0) is_complete(k, sock, c, cl);
            else if (strcmp(type, "inspect_request") == 0)
                reply(k, sock, "inspect_reply", "{\"status\":\"ok\",\"found\":false,\"data\":{},\"metadata\":{}}");
            else if (strcmp(type, "history_request") == 0)
                reply(k, sock, "history_reply", "{\"status\":\"ok\",\"history\":[]}");
            else if (strcmp(type, "comm_info_request") == 0)
                reply(k, sock, "comm_info_reply", "{\"status\":\"ok\",\"comms\":{}}");
            else if (strcmp(type, "interrupt_request") == 0)
                reply(k, sock, "interrupt_reply", "{\"status\":\"ok\"}");
            else if (strcmp(type, "shutdown_request") == 0) {
                bool restart = json_find_bool(c, cl, "restart", false);
                reply(k, sock, "shutdown_reply", restart ? "{\"status\":\"ok\",\"restart\":true}"
                                                         : "{\"status\":\"ok\",\"restart\":false}");
                k->quit = true;
            }
            status(k, "idle");
            free(type);
            k->nidents = 0;
            k->idents = NULL;
        }
        for (int i = 0; i < 4; i++) jb_free(&parts[i]);
    }
done:
    for (int i = 0; i < n; i++) zmq_msg_close(&frames[i]);
}

/* ------------------------------------------------------------------ sockets */

static void *heartbeat_main(void *ud) {
    void *hb = ud;
    char buf[256];
    for (;;) {
        int n = zmq_recv(hb, buf, sizeof buf, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            zmq_close(hb); /* the context is shutting down */
            return NULL;
        }
        zmq_send(hb, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf, 0);
    }
}

static void *bind_socket(Kernel *k, int type, const char *transport, const char *ip, long port) {
    void *s = zmq_socket(k->ctx, type);
    int linger = 1000;
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    char addr[300];
    snprintf(addr, sizeof addr, strcmp(transport, "ipc") == 0 ? "%s://%s-%ld" : "%s://%s:%ld", transport, ip, port);
    if (zmq_bind(s, addr) != 0) {
        dprintf(k->log_fd, "gpy: cannot bind %s: %s\n", addr, zmq_strerror(errno));
        return NULL;
    }
    return s;
}

int jupyter_kernel_run(VM *vm, const char *connection_file) {
    FILE *f = fopen(connection_file, "rb");
    if (!f) {
        fprintf(stderr, "gpy: can't open connection file '%s': %s\n", connection_file, strerror(errno));
        return 2;
    }
    JBuf conf = {0};
    char buf[4096];
    size_t r;
    while ((r = fread(buf, 1, sizeof buf, f)) > 0) jb_putn(&conf, buf, r);
    fclose(f);
    if (!conf.s) jb_puts(&conf, "");
    Kernel k = {.vm = vm};
    the_kernel = &k;
    pthread_mutex_init(&k.iopub_lock, NULL);
    char *key = json_find_string(conf.s, conf.len, "key");
    char *scheme = json_find_string(conf.s, conf.len, "signature_scheme");
    char *ip = json_find_string(conf.s, conf.len, "ip");
    char *transport = json_find_string(conf.s, conf.len, "transport");
    if (scheme && *scheme && strcmp(scheme, "hmac-sha256") != 0) {
        fprintf(stderr, "gpy: unsupported signature scheme %s (hmac-sha256 only)\n", scheme);
        return 2;
    }
    snprintf(k.key, sizeof k.key, "%s", key ? key : "");
    k.key_len = strlen(k.key);
    make_uuid(k.session);
    k.log_fd = dup(2);
    k.ctx = zmq_ctx_new();
    const char *tr = transport ? transport : "tcp", *host = ip ? ip : "127.0.0.1";
    k.shell = bind_socket(&k, ZMQ_ROUTER, tr, host, json_find_int(conf.s, conf.len, "shell_port", 0));
    k.control = bind_socket(&k, ZMQ_ROUTER, tr, host, json_find_int(conf.s, conf.len, "control_port", 0));
    k.stdin_sock = bind_socket(&k, ZMQ_ROUTER, tr, host, json_find_int(conf.s, conf.len, "stdin_port", 0));
    k.iopub = bind_socket(&k, ZMQ_PUB, tr, host, json_find_int(conf.s, conf.len, "iopub_port", 0));
    k.hb = bind_socket(&k, ZMQ_REP, tr, host, json_find_int(conf.s, conf.len, "hb_port", 0));
    free(key);
    free(scheme);
    free(ip);
    free(transport);
    jb_free(&conf);
    if (!k.shell || !k.control || !k.stdin_sock || !k.iopub || !k.hb) return 1;

    /* fds 1 and 2 become pipes read by the output thread */
    int po[2], pe[2];
    if (pipe(po) != 0 || pipe(pe) != 0) return 1;
    fflush(stdout);
    fflush(stderr);
    dup2(po[1], 1);
    dup2(pe[1], 2);
    close(po[1]);
    close(pe[1]);
    k.out_pipe = po[0];
    k.err_pipe = pe[0];
    setvbuf(stdout, NULL, _IOLBF, 0);
    pthread_t hb_thread, out_thread;
    pthread_create(&hb_thread, NULL, heartbeat_main, k.hb);
    pthread_create(&out_thread, NULL, reader_main, &k);
    pthread_detach(out_thread);
    vm->print_expr_hook = on_print_expr;
    repl_helpers_load(vm);
    status(&k, "starting");

    while (!k.quit) {
        zmq_pollitem_t items[2] = {{k.control, 0, ZMQ_POLLIN, 0}, {k.shell, 0, ZMQ_POLLIN, 0}};
        int n = zmq_poll(items, 2, -1);
        if (n < 0) {
            if (errno == EINTR) {
                vm_clear_interrupt(vm); /* Ctrl-C while idle: nothing to stop */
                continue;
            }
            break;
        }
        if (items[0].revents & ZMQ_POLLIN) serve(&k, k.control);
        else if (items[1].revents & ZMQ_POLLIN) serve(&k, k.shell);
    }
    vm->print_expr_hook = NULL;
    /* what is written from now on (exit reports) goes where the kernel's stderr went */
    fflush(stdout);
    fflush(stderr);
    dup2(k.log_fd, 1);
    dup2(k.log_fd, 2);
    zmq_close(k.shell);
    zmq_close(k.control);
    zmq_close(k.stdin_sock);
    zmq_close(k.iopub);
    zmq_ctx_shutdown(k.ctx); /* ends the heartbeat thread's recv; it closes its socket */
    pthread_join(hb_thread, NULL);
    zmq_ctx_term(k.ctx);
    jb_free(&k.parent);
    jb_free(&k.err_text);
    jb_free(&k.result);
    the_kernel = NULL;
    return vm->exit_requested ? vm->exit_code : 0;
}
