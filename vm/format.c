/*
** format.c — all text formatting of values: repr(float), the format-spec
** mini-language (format(), f-strings, str.format), printf-style "%"
** formatting and str.format / str.format_map. The algorithms and error
** messages follow CPython 3.11 (Python/formatter_unicode.c,
** Objects/unicodeobject.c, Python/pystrtod.c) so that output matches
** byte for byte.
**
** Floats are converted with the C library (snprintf is correctly rounded
** with glibc; strtod checks round trips), then laid out with CPython's
** rules. Everything that builds text writes into a StrBuf; a raise must
** not leak it, so code that may run user code (__format__, __repr__,
** __getitem__...) runs under vm_pcall and frees the buffer on failure.
*/
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bigint.h"
#include "str_private.h"
#include "unicode.h"
#include "vm.h"
#include "complex_num.h"

/* ================================================================ StrBuf helpers */

/* Puts sb into its failed state (see strbuf.c): sb_finish raises MemoryError. */
static void sb_fail(StrBuf *sb) {
    free(sb->data);
    sb->data = NULL;
    sb->len = 0;
    sb->cap = (size_t)-1;
}

static bool sb_failed(const StrBuf *sb) {
    return sb->cap == (size_t)-1;
}

/* Appends c n times. A result beyond the Str size limit fails the buffer
** up front (MemoryError at sb_finish) instead of looping ~n times. */
static void sb_fill(StrBuf *sb, const char *c, size_t clen, int64_t n) {
    if (n <= 0 || sb_failed(sb))
        return;
    if ((uint64_t)n > (uint64_t)UINT32_MAX / clen || sb->len + (size_t)n * clen > (size_t)UINT32_MAX) {
        sb_fail(sb);
        return;
    }
    for (int64_t i = 0; i < n && !sb_failed(sb); i++)
        sb_append(sb, c, clen);
}

/* Appends decimal i. */
static void sb_int(StrBuf *sb, int64_t i) {
    char buf[24];
    int n = snprintf(buf, sizeof buf, "%lld", (long long)i);
    sb_append(sb, buf, (size_t)n);
}

_Noreturn static void no_memory(VM *vm) {
    if (IS_OBJ(vm->memory_error))
        vm_throw(vm, vm->memory_error);
    vm_raise_kind(vm, MemoryError, "out of memory");
}

/* ================================================================ float -> digits */

enum { DF_ALT = 1, DF_ADD_DOT_0 = 2, DF_NO_NEG_0 = 4 };

/* Splits snprintf's "%.Ne" output "d.ddde+XX" into its digits (trailing
** zeros removed, at least one kept) and the decimal point position. */
static int split_e(const char *buf, char *digits, int *decpt) {
    int nd = 0;
    const char *p = buf;
    while (*p && *p != 'e') {
        if (*p >= '0' && *p <= '9')
            digits[nd++] = *p;
        p++;
    }
    int exp = *p == 'e' ? atoi(p + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    if (nd == 1 && digits[0] == '0')
        exp = 0;
    digits[nd] = '\0';
    *decpt = exp + 1;
    return nd;
}

/* Shortest digit string of x (finite, >= 0) that reads back as x, like
** David Gay's mode 0: when 15 significant digits round-trip, the shortest
** string is them without trailing zeros (15 = DBL_DIG makes it unique),
** else 16 digits if they round-trip, else 17. */
static int shortest_digits(double x, char digits[32], int *decpt) {
    char buf[40];
    if (x != 0 && x < DBL_MIN) {
        /* subnormals carry fewer digits: binary search the shortest */
        int lo = 1, hi = 17;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            snprintf(buf, sizeof buf, "%.*e", mid - 1, x);
            if (strtod(buf, NULL) == x)
                hi = mid;
            else
                lo = mid + 1;
        }
        snprintf(buf, sizeof buf, "%.*e", lo - 1, x);
        return split_e(buf, digits, decpt);
    }
    for (int p = 15; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, x);
        if (p == 17 || strtod(buf, NULL) == x)
            break;
    }
    return split_e(buf, digits, decpt);
}

/* CPython's format_float_short layout for modes 'r' (repr) and 'g': digits
** with the decimal point at decpt, in fixed or exponent notation. out must
** have room for nd + |decpt| + precision + 16 bytes. Returns the length. */
static size_t layout_digits(char *out, const char *digits, int nd, int decpt, char mode, int precision, int flags) {
    bool alt = flags & DF_ALT, add_dot_0 = flags & DF_ADD_DOT_0;
    bool use_exp = false;
    int vend = nd;
    if (mode == 'g') {
        if (decpt <= -4 || decpt > (add_dot_0 ? precision - 1 : precision))
            use_exp = true;
        if (alt)
            vend = precision;
    } else if (decpt <= -4 || decpt > 16) {
        use_exp = true;
    }
    int exp = 0;
    if (use_exp) {
        exp = decpt - 1;
        decpt = 1;
    }
    int vstart = decpt <= 0 ? decpt - 1 : 0;
    if (!use_exp && add_dot_0)
        vend = vend > decpt ? vend : decpt + 1;
    else
        vend = vend > decpt ? vend : decpt;
    char *p = out;
    if (decpt <= 0) {
        for (int i = 0; i < decpt - vstart; i++)
            *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -decpt; i++)
            *p++ = '0';
    }
    if (0 < decpt && decpt <= nd) {
        memcpy(p, digits, (size_t)decpt);
        p += decpt;
        *p++ = '.';
        memcpy(p, digits + decpt, (size_t)(nd - decpt));
        p += nd - decpt;
    } else {
        memcpy(p, digits, (size_t)nd);
        p += nd;
    }
    if (nd < decpt) {
        for (int i = 0; i < decpt - nd; i++)
            *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < vend - decpt; i++)
            *p++ = '0';
    } else {
        for (int i = 0; i < vend - nd; i++)
            *p++ = '0';
    }
    if (p[-1] == '.' && !alt)
        p--;
    if (use_exp)
        p += sprintf(p, "e%+.02d", exp);
    return (size_t)(p - out);
}

int float_repr(double d, char *buf, size_t size) {
    char out[64];
    size_t n;
    if (isnan(d)) {
        n = (size_t)snprintf(out, sizeof out, "nan");
    } else if (isinf(d)) {
        n = (size_t)snprintf(out, sizeof out, d < 0 ? "-inf" : "inf");
    } else {
        char digits[32];
        int decpt;
        size_t k = 0;
        if (signbit(d)) {
            out[k++] = '-';
            d = -d;
        }
        int nd = shortest_digits(d, digits, &decpt);
        n = k + layout_digits(out + k, digits, nd, decpt, 'r', 0, DF_ADD_DOT_0);
    }
    if (size == 0)
        return (int)n;
    size_t c = n < size - 1 ? n : size - 1;
    memcpy(buf, out, c);
    buf[c] = '\0';
    return (int)c;
}

/* snprintf of one double with a precision, appended to sb. alt selects
** the '#' form; type is 'e' or 'f'. */
static void sb_cfmt(StrBuf *sb, char type, bool alt, int prec, double x) {
    char small[128];
    int n;
#define CFMT(buf, size)                                                        \
    (type == 'e' ? (alt ? snprintf(buf, size, "%#.*e", prec, x) : snprintf(buf, size, "%.*e", prec, x)) \
                 : (alt ? snprintf(buf, size, "%#.*f", prec, x) : snprintf(buf, size, "%.*f", prec, x)))
    n = CFMT(small, sizeof small);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        sb_append(sb, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        sb_fail(sb);
        return;
    }
    CFMT(big, (size_t)n + 1);
#undef CFMT
    sb_append(sb, big, (size_t)n);
    free(big);
}

/* PyOS_double_to_string: x in format type e E f F g G r with precision
** and DF_* flags, appended to sb (a leading '-' for negative values). */
static void double_to_sb(StrBuf *sb, double x, char type, int prec, int flags) {
    bool upper = type == 'E' || type == 'F' || type == 'G';
    char t = upper ? (char)(type + 32) : type;
    if (isnan(x)) {
        sb_appends(sb, upper ? "NAN" : "nan");
        return;
    }
    bool neg = signbit(x) != 0;
    if (isinf(x)) {
        sb_appends(sb, neg ? (upper ? "-INF" : "-inf") : (upper ? "INF" : "inf"));
        return;
    }
    size_t start = sb->len;
    if (neg) {
        sb_putc(sb, '-');
        x = -x;
    }
    if (t == 'e' || t == 'f') {
        sb_cfmt(sb, t, flags & DF_ALT, prec, x);
    } else {
        /* 'g' and 'r': digits, then CPython's layout */
        char small_digits[64], small_out[96];
        char *digits = small_digits, *out = small_out;
        int nd, decpt;
        if (t == 'r') {
            nd = shortest_digits(x, small_digits, &decpt);
            prec = 0;
        } else {
            if (prec == 0)
                prec = 1;
            size_t need = (size_t)prec + 40;
            char *tmp = need <= sizeof small_digits ? small_digits : malloc(need);
            char *dig = need <= sizeof small_digits ? small_digits : malloc(need);
            if (!tmp || !dig) {
                if (tmp != small_digits)
                    free(tmp);
                if (dig != small_digits)
                    free(dig);
                sb_fail(sb);
                return;
            }
            if (tmp == small_digits) {
                char buf[64];
                snprintf(buf, sizeof buf, "%.*e", prec - 1, x);
                nd = split_e(buf, dig, &decpt);
            } else {
                snprintf(tmp, need, "%.*e", prec - 1, x);
                nd = split_e(tmp, dig, &decpt);
                free(tmp);
            }
            digits = dig;
        }
        size_t need = (size_t)nd + (size_t)abs(decpt) + (size_t)prec + 16;
        if (need > sizeof small_out) {
            out = malloc(need);
            if (!out) {
                if (digits != small_digits)
                    free(digits);
                sb_fail(sb);
                return;
            }
        }
        size_t n = layout_digits(out, digits, nd, decpt, t, prec, flags);
        sb_append(sb, out, n);
        if (digits != small_digits)
            free(digits);
        if (out != small_out)
            free(out);
    }
    if (sb_failed(sb))
        return;
    if (upper) {
        for (size_t i = start; i < sb->len; i++)
            if (sb->data[i] == 'e')
                sb->data[i] = 'E';
    }
    if (neg && (flags & DF_NO_NEG_0)) {
        /* drop the sign when the rounded value is zero */
        bool zero = true;
        for (size_t i = start + 1; i < sb->len && sb->data[i] != 'e' && sb->data[i] != 'E'; i++)
            if (sb->data[i] >= '1' && sb->data[i] <= '9')
                zero = false;
        if (zero) {
            memmove(sb->data + start, sb->data + start + 1, sb->len - start - 1);
            sb->len--;
        }
    }
}

/* ================================================================ format specs */

typedef struct Spec {
    uint32_t fill;     /* code point */
    char align;        /* '<' '>' '=' '^' */
    char sign;         /* 0 '+' '-' ' ' */
    bool no_neg_0;     /* 'z' */
    bool alt;          /* '#' */
    int64_t width;     /* -1: none */
    char thousands;    /* 0 ',' '_' */
    int group;         /* digits per group when thousands is set */
    int64_t precision; /* -1: none */
    uint32_t type;     /* 0: none */
} Spec;

static bool is_align(uint32_t c) {
    return c == '<' || c == '>' || c == '=' || c == '^';
}

/* Reads a run of ASCII digits; returns how many were read. */
static int spec_integer(VM *vm, const char *s, size_t n, size_t *pos, int64_t *out) {
    int64_t acc = 0;
    int consumed = 0;
    while (*pos < n && s[*pos] >= '0' && s[*pos] <= '9') {
        int d = s[*pos] - '0';
        if (acc > (INT64_MAX - d) / 10)
            vm_raise_kind(vm, ValueError, "Too many decimal digits in format string");
        acc = acc * 10 + d;
        (*pos)++;
        consumed++;
    }
    *out = acc;
    return consumed;
}

/* CPython's parse_internal_render_format_spec. tname names the type in
** error messages. */
static void parse_spec(VM *vm, const char *s, size_t n, Spec *f, char default_type, char default_align,
                       const char *tname) {
    f->fill = ' ';
    f->align = default_align;
    f->sign = 0;
    f->no_neg_0 = false;
    f->alt = false;
    f->width = -1;
    f->thousands = 0;
    f->group = 0;
    f->precision = -1;
    f->type = (uint32_t)(unsigned char)default_type;
    bool align_given = false, fill_given = false;
    size_t pos = 0;
    if (n > 0) {
        size_t p1 = 0;
        uint32_t c0 = uc_decode(s, &p1);
        if (p1 < n) {
            size_t p2 = p1;
            uint32_t c1 = uc_decode(s, &p2);
            if (is_align(c1)) {
                f->align = (char)c1;
                f->fill = c0;
                align_given = fill_given = true;
                pos = p2;
            }
        }
        if (!align_given && is_align(c0)) {
            f->align = (char)c0;
            align_given = true;
            pos = p1;
        }
    }
    if (pos < n && (s[pos] == '+' || s[pos] == '-' || s[pos] == ' '))
        f->sign = s[pos++];
    if (pos < n && s[pos] == 'z') {
        f->no_neg_0 = true;
        pos++;
    }
    if (pos < n && s[pos] == '#') {
        f->alt = true;
        pos++;
    }
    if (!fill_given && pos < n && s[pos] == '0') {
        f->fill = '0';
        if (!align_given && default_align == '>')
            f->align = '=';
        pos++;
    }
    if (spec_integer(vm, s, n, &pos, &f->width) == 0)
        f->width = -1;
    if (pos < n && s[pos] == ',') {
        f->thousands = ',';
        pos++;
    }
    if (pos < n && s[pos] == '_') {
        if (f->thousands)
            vm_raise_kind(vm, ValueError, "Cannot specify both ',' and '_'.");
        f->thousands = '_';
        pos++;
    }
    if (pos < n && s[pos] == ',' && f->thousands == '_')
        vm_raise_kind(vm, ValueError, "Cannot specify both ',' and '_'.");
    if (pos < n && s[pos] == '.') {
        pos++;
        if (spec_integer(vm, s, n, &pos, &f->precision) == 0)
            vm_raise_kind(vm, ValueError, "Format specifier missing precision");
    }
    if (pos < n) {
        size_t p = pos;
        uint32_t t = uc_decode(s, &p);
        if (p < n)
            vm_raise_kind(vm, ValueError, "Invalid format specifier '%.*s' for object of type '%s'", (int)n, s,
                          tname);
        f->type = t;
    }
    if (f->thousands) {
        switch (f->type) {
        case 'd': case 'e': case 'f': case 'g': case 'E': case 'G': case '%': case 'F': case 0:
            f->group = 3;
            break;
        case 'b': case 'o': case 'x': case 'X':
            if (f->thousands == '_') {
                f->group = 4;
                break;
            }
            /* fall through */
        default:
            if (f->type > 32 && f->type < 128)
                vm_raise_kind(vm, ValueError, "Cannot specify '%c' with '%c'.", f->thousands, (char)f->type);
            vm_raise_kind(vm, ValueError, "Cannot specify '%c' with '\\x%x'.", f->thousands, (unsigned)f->type);
        }
    }
}

_Noreturn static void unknown_type(VM *vm, uint32_t type, const char *tname) {
    if (type > 32 && type < 128)
        vm_raise_kind(vm, ValueError, "Unknown format code '%c' for object of type '%s'", (char)type, tname);
    vm_raise_kind(vm, ValueError, "Unknown format code '\\x%x' for object of type '%s'", (unsigned)type, tname);
}

/* _PyUnicode_InsertThousandsGrouping: groups nd digits (group 0: none)
** with sep, left-filled with zeros (and separators) up to min_width.
** Returns the length; when out_end is given, writes right-aligned so that
** the text ends at out_end. */
static int64_t group_digits(const char *digits, int64_t nd, int64_t min_width, int group, char sep, char *out_end) {
    if (min_width < 0)
        min_width = 0;
    int64_t count = 0, remaining = nd;
    bool use_sep = false, done = false;
    const char *dp = digits + nd;
    char *op = out_end;
#define FILL(nchars, nzeros)                 \
    do {                                     \
        if (op) {                            \
            if (use_sep)                     \
                *--op = sep;                 \
            for (int64_t k = 0; k < (nchars); k++) \
                *--op = *--dp;               \
            for (int64_t k = 0; k < (nzeros); k++) \
                *--op = '0';                 \
        }                                    \
    } while (0)
    if (group > 0) {
        for (;;) {
            int64_t lim = remaining > min_width ? remaining : min_width;
            if (lim < 1)
                lim = 1;
            int64_t len = group < lim ? group : lim;
            int64_t nzeros = len - remaining > 0 ? len - remaining : 0;
            int64_t nchars = remaining < len ? remaining : len;
            if (nchars < 0)
                nchars = 0;
            count += (use_sep ? 1 : 0) + nzeros + nchars;
            FILL(nchars, nzeros);
            use_sep = true;
            remaining -= nchars;
            min_width -= len;
            if (remaining <= 0 && min_width <= 0) {
                done = true;
                break;
            }
            min_width -= 1;
        }
    }
    if (!done) {
        int64_t len = remaining > min_width ? remaining : min_width;
        if (len < 1)
            len = 1;
        int64_t nzeros = len - remaining > 0 ? len - remaining : 0;
        int64_t nchars = remaining < len ? remaining : len;
        if (nchars < 0)
            nchars = 0;
        count += (use_sep ? 1 : 0) + nzeros + nchars;
        FILL(nchars, nzeros);
    }
#undef FILL
    return count;
}

/* calc_number_widths + fill_number: lays out
**   <lpad> <sign> <prefix> <spad> <grouped digits> <rest> <rpad>
** digits: the integer digits; rest: decimal point, fraction, exponent,
** '%' or a 'c' character (rest_chars: its length in code points). */
static void emit_number(StrBuf *sb, const Spec *f, bool neg, const char *prefix, const char *digits, int64_t nd,
                        const char *rest, size_t rest_bytes, int64_t rest_chars) {
    char signc = 0;
    if (f->sign == '+')
        signc = neg ? '-' : '+';
    else if (f->sign == ' ')
        signc = neg ? '-' : ' ';
    else if (neg)
        signc = '-';
    int64_t nprefix = (int64_t)strlen(prefix);
    int64_t nonnum = (signc ? 1 : 0) + nprefix + rest_chars;
    int64_t min_width = (f->fill == '0' && f->align == '=') ? f->width - nonnum : 0;
    int group = f->thousands ? f->group : 0;
    int64_t ngrouped = nd == 0 ? 0 : group_digits(digits, nd, min_width, group, f->thousands, NULL);
    int64_t padding = f->width - (nonnum + ngrouped);
    int64_t lpad = 0, spad = 0, rpad = 0;
    if (padding > 0) {
        switch (f->align) {
        case '<': rpad = padding; break;
        case '^':
            lpad = padding / 2;
            rpad = padding - lpad;
            break;
        case '=': spad = padding; break;
        default: lpad = padding; break;
        }
    }
    char fill[4];
    size_t fl = (size_t)uc_encode(f->fill, fill);
    sb_fill(sb, fill, fl, lpad);
    if (signc)
        sb_putc(sb, signc);
    sb_append(sb, prefix, (size_t)nprefix);
    sb_fill(sb, fill, fl, spad);
    if (nd > 0) {
        char small[128];
        char *buf = ngrouped <= (int64_t)sizeof small ? small : malloc((size_t)ngrouped);
        if (!buf) {
            sb_fail(sb);
            return;
        }
        group_digits(digits, nd, min_width, group, f->thousands, buf + ngrouped);
        sb_append(sb, buf, (size_t)ngrouped);
        if (buf != small)
            free(buf);
    }
    sb_append(sb, rest, rest_bytes);
    sb_fill(sb, fill, fl, rpad);
}

static void fmt_float(VM *vm, StrBuf *sb, double x, const Spec *f, const char *tname);

/* Digits of the magnitude of v in base (lowercase unless upper). */
static int int_digits(int64_t v, int base, bool upper, char *out /* 65 */) {
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char tmp[65];
    int n = 0;
    do {
        tmp[n++] = dig[mag % (uint64_t)base];
        mag /= (uint64_t)base;
    } while (mag);
    for (int i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

/* format_long_internal */
static void fmt_int(VM *vm, StrBuf *sb, int64_t v, const Spec *f, const char *tname) {
    switch (f->type) {
    case 'b': case 'c': case 'd': case 'o': case 'x': case 'X': case 'n': break;
    case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case '%':
        fmt_float(vm, sb, (double)v, f, tname);
        return;
    default: unknown_type(vm, f->type, tname);
    }
    if (f->precision != -1)
        vm_raise_kind(vm, ValueError, "Precision not allowed in integer format specifier");
    if (f->no_neg_0)
        vm_raise_kind(vm, ValueError, "Negative zero coercion (z) not allowed in integer format specifier");
    if (f->type == 'c') {
        if (f->sign)
            vm_raise_kind(vm, ValueError, "Sign not allowed with integer format specifier 'c'");
        if (f->alt)
            vm_raise_kind(vm, ValueError, "Alternate form (#) not allowed with integer format specifier 'c'");
        if (v < 0 || v > 0x10FFFF)
            vm_raise_kind(vm, OverflowError, "%%c arg not in range(0x110000)");
        char buf[4];
        int n = uc_encode((uint32_t)v, buf);
        emit_number(sb, f, false, "", "", 0, buf, (size_t)n, 1);
        return;
    }
    int base = 10;
    const char *prefix = "";
    switch (f->type) {
    case 'b': base = 2, prefix = "0b"; break;
    case 'o': base = 8, prefix = "0o"; break;
    case 'x': base = 16, prefix = "0x"; break;
    case 'X': base = 16, prefix = "0X"; break;
    default: break;
    }
    char digits[65];
    int nd = int_digits(v, base, f->type == 'X', digits);
    if (f->sign != '+' && f->sign != ' ' && f->width == -1 && !f->thousands) {
        if (v < 0)
            sb_putc(sb, '-');
        if (f->alt)
            sb_appends(sb, prefix);
        sb_append(sb, digits, (size_t)nd);
        return;
    }
    emit_number(sb, f, v < 0, f->alt ? prefix : "", digits, nd, "", 0, 0);
}

/* fmt_int for a big int: the same layout, digits from GMP. */
static void fmt_bigint(VM *vm, StrBuf *sb, Value v, const Spec *f) {
    switch (f->type) {
    case 'b': case 'c': case 'd': case 'o': case 'x': case 'X': case 'n': break;
    case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case '%':
        fmt_float(vm, sb, bigint_to_double(vm, v), f, "int");
        return;
    default: unknown_type(vm, f->type, "int");
    }
    if (f->precision != -1)
        vm_raise_kind(vm, ValueError, "Precision not allowed in integer format specifier");
    if (f->no_neg_0)
        vm_raise_kind(vm, ValueError, "Negative zero coercion (z) not allowed in integer format specifier");
    if (f->type == 'c')
        vm_raise_kind(vm, OverflowError, "Python int too large to convert to C long");
    int base = 10;
    const char *prefix = "";
    switch (f->type) {
    case 'b': base = 2, prefix = "0b"; break;
    case 'o': base = 8, prefix = "0o"; break;
    case 'x': base = 16, prefix = "0x"; break;
    case 'X': base = 16, prefix = "0X"; break;
    default: break;
    }
    size_t nd;
    char *digits = bigint_digits(vm, v, base, f->type == 'X', &nd);
    emit_number(sb, f, bigint_sign(vm, v) < 0, f->alt ? prefix : "", digits, (int64_t)nd, "", 0, 0);
    free(digits);
}

Str *format_bigint_spec(VM *vm, Value v, Str *spec) {
    Spec f;
    parse_spec(vm, spec->chars, (size_t)spec->len, &f, 'd', '>', "int");
    StrBuf sb;
    sb_init(&sb);
    fmt_bigint(vm, &sb, v, &f);
    return sb_finish(vm, &sb);
}

/* format_float_internal */
static void fmt_float(VM *vm, StrBuf *sb, double x, const Spec *f, const char *tname) {
    switch (f->type) {
    case 0: case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case 'n': case '%': break;
    default: unknown_type(vm, f->type, tname);
    }
    if (f->precision > INT_MAX)
        vm_raise_kind(vm, ValueError, "precision too big");
    int precision = (int)f->precision, default_precision = 6;
    int flags = (f->alt ? DF_ALT : 0) | (f->no_neg_0 ? DF_NO_NEG_0 : 0);
    char type = (char)f->type;
    if (type == 0) {
        flags |= DF_ADD_DOT_0;
        type = 'r';
        default_precision = 0;
    }
    if (type == 'n')
        type = 'g';
    bool pct = false;
    if (type == '%') {
        type = 'f';
        x *= 100;
        pct = true;
    }
    if (precision < 0)
        precision = default_precision;
    else if (type == 'r')
        type = 'g';
    if (f->sign != '+' && f->sign != ' ' && f->width == -1 && f->type != 'n' && !f->thousands) {
        double_to_sb(sb, x, type, precision, flags);
        if (pct)
            sb_putc(sb, '%');
        return;
    }
    StrBuf num;
    sb_init(&num);
    double_to_sb(&num, x, type, precision, flags);
    if (pct)
        sb_putc(&num, '%');
    if (sb_failed(&num)) {
        sb_fail(sb);
        return;
    }
    const char *p = num.data;
    size_t n = num.len;
    bool neg = n > 0 && p[0] == '-';
    if (neg)
        p++, n--;
    size_t nd = 0;
    while (nd < n && p[nd] >= '0' && p[nd] <= '9')
        nd++;
    emit_number(sb, f, neg, "", p, (int64_t)nd, p + nd, n - nd, (int64_t)(n - nd));
    sb_free(&num);
}

/* format_string_internal */
static void fmt_str(VM *vm, StrBuf *sb, Str *s, const Spec *f, const char *tname) {
    if (f->type != 's')
        unknown_type(vm, f->type, tname);
    if (f->sign)
        vm_raise_kind(vm, ValueError, "Sign not allowed in string format specifier");
    if (f->no_neg_0)
        vm_raise_kind(vm, ValueError, "Negative zero coercion (z) not allowed in string format specifier");
    if (f->alt)
        vm_raise_kind(vm, ValueError, "Alternate form (#) not allowed in string format specifier");
    if (f->align == '=')
        vm_raise_kind(vm, ValueError, "'=' alignment not allowed in string format specifier");
    int64_t len = s->nchars;
    size_t blen = (size_t)s->len;
    if (f->precision >= 0 && len >= f->precision) {
        len = f->precision;
        blen = s->ascii ? (size_t)len : uc_offset(s->chars, (size_t)s->len, (size_t)len);
    }
    int64_t total = f->width > len ? f->width : len;
    int64_t lpad = f->align == '>' ? total - len : f->align == '^' ? (total - len) / 2 : 0;
    int64_t rpad = total - len - lpad;
    char fill[4];
    size_t fl = (size_t)uc_encode(f->fill, fill);
    sb_fill(sb, fill, fl, lpad);
    sb_append(sb, s->chars, blen);
    sb_fill(sb, fill, fl, rpad);
}

static bool spec_empty(Str *spec) {
    return !spec || spec->len == 0;
}

Str *format_int_spec(VM *vm, int64_t i, Str *spec) {
    StrBuf sb;
    sb_init(&sb);
    if (spec_empty(spec)) {
        sb_int(&sb, i);
        return sb_finish(vm, &sb);
    }
    Spec f;
    parse_spec(vm, spec->chars, (size_t)spec->len, &f, 'd', '>', "int");
    fmt_int(vm, &sb, i, &f, "int");
    return sb_finish(vm, &sb);
}

Str *format_float_spec(VM *vm, double d, Str *spec) {
    StrBuf sb;
    sb_init(&sb);
    if (spec_empty(spec)) {
        double_to_sb(&sb, d, 'r', 0, DF_ADD_DOT_0);
        return sb_finish(vm, &sb);
    }
    Spec f;
    parse_spec(vm, spec->chars, (size_t)spec->len, &f, 0, '>', "float");
    fmt_float(vm, &sb, d, &f, "float");
    return sb_finish(vm, &sb);
}

Str *format_str_spec(VM *vm, Str *s, Str *spec) {
    if (spec_empty(spec))
        return s;
    Spec f;
    parse_spec(vm, spec->chars, (size_t)spec->len, &f, 's', '<', "str");
    StrBuf sb;
    sb_init(&sb);
    fmt_str(vm, &sb, s, &f, "str");
    return sb_finish(vm, &sb);
}

/* One part of a complex number laid out by emit_number with f's sign and
** grouping but no padding (format_complex_internal pads the whole). */
static void complex_part(StrBuf *sb, double x, char type, int precision, int flags, const Spec *f, char sign) {
    StrBuf num;
    sb_init(&num);
    double_to_sb(&num, x, type, precision, flags);
    if (sb_failed(&num)) {
        sb_fail(sb);
        return;
    }
    Spec part = *f;
    part.fill = ' ';
    part.align = '<';
    part.width = -1;
    part.sign = sign;
    const char *p = num.data;
    size_t n = num.len;
    bool neg = n > 0 && p[0] == '-';
    if (neg)
        p++, n--;
    size_t nd = 0;
    while (nd < n && p[nd] >= '0' && p[nd] <= '9')
        nd++;
    emit_number(sb, &part, neg, "", p, (int64_t)nd, p + nd, n - nd, (int64_t)(n - nd));
    sb_free(&num);
}

/* format_complex_internal: both parts formatted like floats, the imaginary
** one always signed (unless it stands alone); no type means str()'s layout
** with parentheses. */
Str *format_complex_spec(VM *vm, double re, double im, Str *spec) {
    Spec f;
    parse_spec(vm, spec ? spec->chars : "", spec ? (size_t)spec->len : 0, &f, 0, '>', "complex");
    switch (f.type) {
    case 0: case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case 'n': break;
    default: unknown_type(vm, f.type, "complex");
    }
    if (f.fill == '0')
        vm_raise_kind(vm, ValueError, "Zero padding is not allowed in complex format specifier");
    if (f.align == '=')
        vm_raise_kind(vm, ValueError, "'=' alignment flag is not allowed in complex format specifier");
    if (f.precision > INT_MAX)
        vm_raise_kind(vm, ValueError, "precision too big");
    int precision = (int)f.precision, default_precision = 6;
    int flags = (f.alt ? DF_ALT : 0) | (f.no_neg_0 ? DF_NO_NEG_0 : 0);
    char type = (char)f.type;
    bool skip_re = false, parens = false;
    if (type == 0) {
        type = 'r';
        default_precision = 0;
        if (re == 0.0 && !signbit(re))
            skip_re = true;
        else
            parens = true;
    }
    if (type == 'n')
        type = 'g';
    if (precision < 0)
        precision = default_precision;
    else if (type == 'r')
        type = 'g';
    StrBuf body;
    sb_init(&body);
    if (parens)
        sb_putc(&body, '(');
    if (!skip_re)
        complex_part(&body, re, type, precision, flags, &f, f.sign);
    complex_part(&body, im, type, precision, flags, &f, skip_re ? f.sign : '+');
    sb_appends(&body, parens ? "j)" : "j");
    if (sb_failed(&body))
        vm_raise_kind(vm, MemoryError, "out of memory");
    int64_t len = (int64_t)body.len; /* ASCII */
    int64_t total = f.width > len ? f.width : len;
    int64_t lpad = f.align == '<' ? 0 : f.align == '^' ? (total - len) / 2 : total - len;
    StrBuf sb;
    sb_init(&sb);
    char fill[4];
    size_t fl = (size_t)uc_encode(f.fill, fill);
    sb_fill(&sb, fill, fl, lpad);
    sb_append(&sb, body.data, body.len);
    sb_fill(&sb, fill, fl, total - len - lpad);
    sb_free(&body);
    return sb_finish(vm, &sb);
}

/* ================================================================ printf-style % */

enum { F_LJUST = 1, F_SIGN = 2, F_BLANK = 4, F_ALT = 8, F_ZERO = 16 };

typedef struct Pct {
    Str *fmt;
    Value args;    /* right operand */
    Value cur;     /* single argument (args, or the last %(key) item) */
    int64_t arglen, argidx;
    Value dict;    /* the mapping for %(key)s, or EMPTY */
    bool guarded;  /* running under vm_pcall: the caller frees sb */
    int32_t nroots;
    StrBuf sb;
} Pct;

typedef struct PctArg {
    int flags;
    int64_t width, prec;
    uint32_t ch;
    bool sign;
} PctArg;

/* Raises after releasing the buffer (unguarded runs own it). */
_Noreturn static void pct_raise(VM *vm, Pct *c, Type *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static void pct_raise(VM *vm, Pct *c, Type *t, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!c->guarded)
        sb_free(&c->sb);
    vm_raise(vm, t, "%s", msg);
}

#define PCT_ERR(kind, ...) pct_raise(vm, c, vm->exc[EXC_##kind], __VA_ARGS__)

static Value pct_next_arg(VM *vm, Pct *c) {
    if (c->argidx < c->arglen) {
        int64_t i = c->argidx++;
        if (c->arglen < 0)
            return c->cur;
        return AS_TUPLE(c->args)->items[i];
    }
    PCT_ERR(TypeError, "not enough arguments for format string");
}

/* unicode_format_arg_output: pads and signs the converted text p
** (blen bytes, len code points). */
static void pct_output(Pct *c, PctArg *a, const char *p, size_t blen, int64_t len) {
    StrBuf *sb = &c->sb;
    char fill = (a->sign && (a->flags & F_ZERO)) ? '0' : ' ';
    if ((a->width == -1 || a->width <= len) && (a->prec == -1 || a->prec >= len) &&
        !(a->flags & (F_SIGN | F_BLANK))) {
        sb_append(sb, p, blen);
        return;
    }
    if ((a->ch == 's' || a->ch == 'r' || a->ch == 'a') && a->prec >= 0 && len > a->prec)
        len = a->prec;
    size_t pi = 0;
    char signchar = 0;
    int64_t width = a->width;
    if (a->sign) {
        if (p[0] == '-' || p[0] == '+') {
            signchar = p[0];
            len--;
            pi++;
        } else if (a->flags & F_SIGN) {
            signchar = '+';
        } else if (a->flags & F_BLANK) {
            signchar = ' ';
        }
    }
    if (width < len)
        width = len;
    if (signchar) {
        if (fill != ' ')
            sb_putc(sb, signchar);
        if (width > len)
            width--;
    }
    bool altpfx = (a->flags & F_ALT) && (a->ch == 'x' || a->ch == 'X' || a->ch == 'o');
    if (altpfx) {
        if (fill != ' ')
            sb_append(sb, p + pi, 2);
        width -= 2;
        if (width < 0)
            width = 0;
        len -= 2;
    }
    if (width > len && !(a->flags & F_LJUST)) {
        sb_fill(sb, &fill, 1, width - len);
        width = len;
    }
    if (fill == ' ') {
        if (signchar)
            sb_putc(sb, signchar);
        if (altpfx)
            sb_append(sb, p + pi, 2);
    }
    if (altpfx)
        pi += 2;
    if (len > 0)
        sb_append(sb, p + pi, uc_offset(p + pi, blen - pi, (size_t)len));
    if (width > len)
        sb_fill(sb, " ", 1, width - len);
}

/* %d %i %u %o %x %X of an int: [-][0x]digits, digits zero-padded to prec. */
static void pct_int_text(StrBuf *out, int64_t v, const PctArg *a) {
    int base = a->ch == 'o' ? 8 : (a->ch == 'x' || a->ch == 'X') ? 16 : 10;
    char digits[65];
    int nd = int_digits(v, base, a->ch == 'X', digits);
    if (v < 0)
        sb_putc(out, '-');
    if ((a->flags & F_ALT) && base != 10)
        sb_appends(out, a->ch == 'o' ? "0o" : a->ch == 'x' ? "0x" : "0X");
    for (int64_t k = nd; k < a->prec; k++)
        sb_putc(out, '0');
    sb_append(out, digits, (size_t)nd);
}

/* pct_int_text for a big int; its digits come from GMP. */
static void pct_bigint(VM *vm, Pct *c, PctArg *a, Value v) {
    vm_push_root(vm, v);
    int base = a->ch == 'o' ? 8 : (a->ch == 'x' || a->ch == 'X') ? 16 : 10;
    size_t nd;
    char *digits = bigint_digits(vm, v, base, a->ch == 'X', &nd);
    StrBuf t;
    sb_init(&t);
    if (bigint_sign(vm, v) < 0)
        sb_putc(&t, '-');
    if ((a->flags & F_ALT) && base != 10)
        sb_appends(&t, a->ch == 'o' ? "0o" : a->ch == 'x' ? "0x" : "0X");
    for (int64_t k = (int64_t)nd; k < a->prec; k++)
        sb_putc(&t, '0');
    sb_append(&t, digits, nd);
    free(digits);
    vm_pop_roots(vm, 1);
    if (sb_failed(&t)) {
        sb_fail(&c->sb);
        return;
    }
    a->sign = true;
    pct_output(c, a, t.data, t.len, (int64_t)t.len);
    sb_free(&t);
}

static bool pct_is_heap(VM *vm, Value v) {
    return IS_OBJ(v) && (vm_typeof(vm, v)->flags & TYPE_HEAP);
}

/* Converts and outputs one argument for conversion a->ch. */
static void pct_format_arg(VM *vm, Pct *c, PctArg *a, size_t chpos) {
    Value v = pct_next_arg(vm, c);
    StrBuf *sb = &c->sb;
    switch (a->ch) {
    case 's': case 'r': case 'a': {
        if (IS_INT(v) && a->width == -1 && a->prec == -1) {
            sb_int(sb, AS_INT(v));
            return;
        }
        Str *s;
        if (a->ch == 's')
            s = IS_STR(vm, v) ? AS_STR(v) : vm_str(vm, v);
        else if (a->ch == 'r')
            s = vm_repr(vm, v);
        else
            s = str_to_ascii(vm, vm_repr(vm, v));
        pct_output(c, a, s->chars, (size_t)s->len, s->nchars);
        return;
    }
    case 'i': case 'd': case 'u': case 'o': case 'x': case 'X': {
        int64_t iv;
        if (bigint_is(vm, v) || (IS_FLOAT(v) && a->ch != 'o' && a->ch != 'x' && a->ch != 'X' && isfinite(AS_FLOAT(v)) &&
                                 !(AS_FLOAT(v) >= -9223372036854775808.0 && AS_FLOAT(v) < 9223372036854775808.0))) {
            pct_bigint(vm, c, a, bigint_is(vm, v) ? v : bigint_from_double(vm, AS_FLOAT(v)));
            return;
        }
        if (IS_INTLIKE(v)) {
            iv = AS_INTLIKE(v);
        } else if (IS_FLOAT(v)) {
            if (a->ch == 'o' || a->ch == 'x' || a->ch == 'X')
                PCT_ERR(TypeError, "%%%c format: an integer is required, not float", (char)a->ch);
            double d = AS_FLOAT(v);
            if (isnan(d))
                PCT_ERR(ValueError, "cannot convert float NaN to integer");
            if (isinf(d))
                PCT_ERR(OverflowError, "cannot convert float infinity to integer");
            d = trunc(d);
            if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
                PCT_ERR(OverflowError, "integer overflow");
            iv = (int64_t)d;
        } else if (pct_is_heap(vm, v)) {
            iv = vm_to_index(vm, v);
        } else if (a->ch == 'o' || a->ch == 'x' || a->ch == 'X') {
            PCT_ERR(TypeError, "%%%c format: an integer is required, not %s", (char)a->ch, vm_type_name(vm, v));
        } else {
            PCT_ERR(TypeError, "%%%c format: a real number is required, not %s", (char)a->ch, vm_type_name(vm, v));
        }
        if (a->width == -1 && a->prec == -1 && !(a->flags & (F_SIGN | F_BLANK | F_ALT)) && a->ch != 'X' &&
            a->ch != 'o' && a->ch != 'x') {
            sb_int(sb, iv);
            return;
        }
        StrBuf t;
        sb_init(&t);
        pct_int_text(&t, iv, a);
        if (sb_failed(&t)) {
            sb_fail(sb);
            return;
        }
        a->sign = true;
        pct_output(c, a, t.data, t.len, (int64_t)t.len);
        sb_free(&t);
        return;
    }
    case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': {
        double d;
        if (IS_NUMBER(v))
            d = AS_NUMBER(v);
        else if (bigint_is(vm, v))
            d = bigint_to_double(vm, v);
        else if (IS_OBJ(v) && !IS_STR(vm, v))
            d = arg_float(vm, "format", v); /* __float__: numpy scalars (np.float32(x)) as in Python */
        else
            PCT_ERR(TypeError, "must be real number, not %s", vm_type_name(vm, v));
        int prec = a->prec < 0 ? 6 : a->prec > INT_MAX ? INT_MAX : (int)a->prec;
        int flags = (a->flags & F_ALT) ? DF_ALT : 0;
        if (a->width == -1 && a->prec == -1 && !(a->flags & (F_SIGN | F_BLANK))) {
            double_to_sb(sb, d, (char)a->ch, prec, flags);
            return;
        }
        StrBuf t;
        sb_init(&t);
        double_to_sb(&t, d, (char)a->ch, prec, flags);
        if (sb_failed(&t)) {
            sb_fail(sb);
            return;
        }
        a->sign = true;
        pct_output(c, a, t.data, t.len, (int64_t)t.len);
        sb_free(&t);
        return;
    }
    case 'c': {
        uint32_t cp;
        if (IS_STR(vm, v)) {
            Str *s = AS_STR(v);
            if (s->nchars != 1)
                PCT_ERR(TypeError, "%%c requires int or char");
            size_t i = 0;
            cp = uc_decode(s->chars, &i);
        } else if (IS_INTLIKE(v) || pct_is_heap(vm, v)) {
            int64_t x = IS_INTLIKE(v) ? AS_INTLIKE(v) : vm_to_index(vm, v);
            if (x < 0 || x > 0x10FFFF)
                PCT_ERR(OverflowError, "%%c arg not in range(0x110000)");
            cp = (uint32_t)x;
        } else {
            PCT_ERR(TypeError, "%%c requires int or char");
        }
        char buf[4];
        int n = uc_encode(cp, buf);
        pct_output(c, a, buf, (size_t)n, 1);
        return;
    }
    default: {
        int64_t index = (int64_t)uc_count(c->fmt->chars, chpos);
        PCT_ERR(ValueError, "unsupported format character '%c' (0x%x) at index %lld",
                a->ch >= 31 && a->ch <= 126 ? (char)a->ch : '?', (unsigned)a->ch, (long long)index);
    }
    }
}

/* The main loop of PyUnicode_Format. */
static void pct_run(VM *vm, void *ud) {
    Pct *c = ud;
    const char *f = c->fmt->chars;
    size_t n = (size_t)c->fmt->len, pos = 0;
    c->nroots = vm->nroots;
    while (pos < n) {
        const char *pc = memchr(f + pos, '%', n - pos);
        if (!pc) {
            sb_append(&c->sb, f + pos, n - pos);
            break;
        }
        sb_append(&c->sb, f + pos, (size_t)(pc - (f + pos)));
        pos = (size_t)(pc - f) + 1;
        if (pos < n && f[pos] == '%') {
            sb_putc(&c->sb, '%');
            pos++;
            continue;
        }
        PctArg a = {0, -1, -1, 0, false};
        if (pos < n && f[pos] == '(') {
            if (IS_EMPTY(c->dict))
                PCT_ERR(TypeError, "format requires a mapping");
            pos++;
            size_t keystart = pos;
            int pcount = 1;
            while (pcount > 0 && pos < n) {
                if (f[pos] == ')')
                    pcount--;
                else if (f[pos] == '(')
                    pcount++;
                pos++;
            }
            if (pcount > 0)
                PCT_ERR(ValueError, "incomplete format key");
            Str *key = str_new(vm, f + keystart, pos - 1 - keystart);
            vm_push_root(vm, STR_VAL(key));
            Value item;
            if (IS_DICT(vm, c->dict) && !c->guarded) {
                /* only simple keys reach here: no user code runs */
                item = dict_get_str(vm, AS_DICT(c->dict), key);
                if (IS_EMPTY(item)) {
                    Value kv = STR_VAL(key);
                    Value exc = exc_new(vm, vm->exc[EXC_KeyError], 1, &kv);
                    sb_free(&c->sb);
                    vm_throw(vm, exc);
                }
            } else {
                item = vm_getitem(vm, c->dict, STR_VAL(key));
            }
            vm_pop_roots(vm, 1);
            vm_push_root(vm, item);
            c->cur = item;
            c->arglen = -1;
            c->argidx = -2;
        }
        while (pos < n) {
            char ch = f[pos];
            if (ch == '-')
                a.flags |= F_LJUST;
            else if (ch == '+')
                a.flags |= F_SIGN;
            else if (ch == ' ')
                a.flags |= F_BLANK;
            else if (ch == '#')
                a.flags |= F_ALT;
            else if (ch == '0')
                a.flags |= F_ZERO;
            else
                break;
            pos++;
        }
        if (pos < n && f[pos] == '*') {
            Value v = pct_next_arg(vm, c);
            if (!IS_INTLIKE(v))
                PCT_ERR(TypeError, "* wants int");
            a.width = AS_INTLIKE(v);
            if (a.width < 0) {
                a.flags |= F_LJUST;
                a.width = a.width == INT64_MIN ? INT64_MAX : -a.width;
            }
            pos++;
        } else if (pos < n && f[pos] >= '0' && f[pos] <= '9') {
            a.width = 0;
            while (pos < n && f[pos] >= '0' && f[pos] <= '9') {
                if (a.width > (INT64_MAX - 9) / 10)
                    PCT_ERR(ValueError, "width too big");
                a.width = a.width * 10 + (f[pos] - '0');
                pos++;
            }
        }
        if (pos < n && f[pos] == '.') {
            a.prec = 0;
            pos++;
            if (pos < n && f[pos] == '*') {
                Value v = pct_next_arg(vm, c);
                if (!IS_INTLIKE(v))
                    PCT_ERR(TypeError, "* wants int");
                a.prec = AS_INTLIKE(v) < 0 ? 0 : AS_INTLIKE(v);
                if (a.prec > INT_MAX)
                    PCT_ERR(ValueError, "precision too big");
                pos++;
            } else {
                while (pos < n && f[pos] >= '0' && f[pos] <= '9') {
                    if (a.prec > (INT_MAX - 9) / 10)
                        PCT_ERR(ValueError, "precision too big");
                    a.prec = a.prec * 10 + (f[pos] - '0');
                    pos++;
                }
            }
        }
        if (pos < n && (f[pos] == 'h' || f[pos] == 'l' || f[pos] == 'L'))
            pos++;
        if (pos >= n)
            PCT_ERR(ValueError, "incomplete format");
        size_t chpos = pos;
        a.ch = uc_decode(f, &pos);
        pct_format_arg(vm, c, &a, chpos);
        if (sb_failed(&c->sb))
            no_memory(vm);
        if (vm->nroots > c->nroots)
            vm_pop_roots(vm, vm->nroots - c->nroots);
    }
    if (c->argidx < c->arglen && IS_EMPTY(c->dict))
        PCT_ERR(TypeError, "not all arguments converted during string formatting");
}

/* Whether formatting v can run no user code (so no protection is needed). */
static bool pct_simple(VM *vm, Value v) {
    return !IS_OBJ(v) || IS_STR(vm, v);
}

/* PyMapping_Check minus tuples and strings: dicts, and objects with
** __getitem__ (user classes, lists...). */
static bool pct_is_mapping(VM *vm, Value v) {
    if (!IS_OBJ(v) || IS_TUPLE(vm, v) || IS_STR(vm, v))
        return false;
    Type *t = vm_typeof(vm, v);
    if (t->getitem)
        return true;
    if (t->flags & TYPE_HEAP)
        return !IS_EMPTY(type_lookup(vm, t, str_cstr(vm, "__getitem__")));
    return false;
}

static void pct_guarded(VM *vm, void *ud) {
    pct_run(vm, ud);
}

Str *str_percent_format(VM *vm, Str *fmt, Value args) {
    Pct c;
    c.fmt = fmt;
    c.args = args;
    c.cur = args;
    c.dict = pct_is_mapping(vm, args) ? args : EMPTY_VAL;
    if (IS_TUPLE(vm, args)) {
        c.arglen = AS_TUPLE(args)->len;
        c.argidx = 0;
    } else {
        c.arglen = -1;
        c.argidx = -2;
    }
    if (!memchr(fmt->chars, '%', (size_t)fmt->len)) {
        if (c.argidx < c.arglen && IS_EMPTY(c.dict))
            vm_raise_kind(vm, TypeError, "not all arguments converted during string formatting");
        return fmt;
    }
    bool simple = pct_simple(vm, args);
    if (IS_TUPLE(vm, args)) {
        simple = true;
        for (int64_t i = 0; i < AS_TUPLE(args)->len && simple; i++)
            simple = pct_simple(vm, AS_TUPLE(args)->items[i]);
    } else if (IS_DICT(vm, args)) {
        /* str keys with simple values: lookups run no user code */
        int64_t pos = 0;
        Value k, v;
        simple = true;
        while (simple && dict_next(AS_DICT(args), &pos, &k, &v))
            simple = IS_STR(vm, k) && pct_simple(vm, v);
    }
    sb_init(&c.sb);
    vm_push_root(vm, STR_VAL(fmt));
    vm_push_root(vm, args);
    if (simple) {
        c.guarded = false;
        pct_run(vm, &c);
    } else {
        c.guarded = true;
        if (!vm_pcall(vm, pct_guarded, &c)) {
            sb_free(&c.sb);
            vm_rethrow(vm, vm->exc_value);
        }
    }
    vm_pop_roots(vm, 2);
    return sb_finish(vm, &c.sb);
}

/* ================================================================ str.format */

typedef struct Fmt {
    Str *fmt;
    Tuple *args;   /* NULL for format_map */
    Dict *kwargs;  /* may be NULL */
    Value mapping; /* format_map's argument, else EMPTY */
    int auto_state; /* 0 not yet known, 1 automatic numbering, 2 manual */
    int64_t auto_next;
    StrBuf sb;
} Fmt;

/* Field-name integer: the value when s[0..n) is all digits, else -1. */
static int64_t field_integer(VM *vm, const char *s, size_t n) {
    if (n == 0)
        return -1;
    int64_t acc = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        int d = s[i] - '0';
        if (acc > (INT64_MAX - d) / 10)
            vm_raise_kind(vm, ValueError, "Too many decimal digits in format string");
        acc = acc * 10 + d;
    }
    return acc;
}

/* Resolves a field name: "0", "", "name", then ".attr" / "[key]" parts. */
static Value get_field(VM *vm, Fmt *c, const char *s, size_t n) {
    size_t i = 0;
    while (i < n && s[i] != '.' && s[i] != '[')
        i++;
    int64_t idx = field_integer(vm, s, i);
    bool empty = i == 0;
    if (empty || idx != -1) {
        if (!c->args)
            vm_raise_kind(vm, ValueError, "Format string contains positional fields");
        if (c->auto_state == 0)
            c->auto_state = empty ? 1 : 2;
        if (c->auto_state == 2 && empty)
            vm_raise_kind(vm, ValueError,
                          "cannot switch from manual field specification to automatic field numbering");
        if (c->auto_state == 1 && !empty)
            vm_raise_kind(vm, ValueError,
                          "cannot switch from automatic field numbering to manual field specification");
        if (empty)
            idx = c->auto_next++;
    }
    Value obj;
    if (idx == -1) {
        Str *key = str_new(vm, s, i);
        if (!IS_EMPTY(c->mapping)) {
            vm_push_root(vm, STR_VAL(key));
            obj = vm_getitem(vm, c->mapping, STR_VAL(key));
            vm_pop_roots(vm, 1);
        } else {
            obj = c->kwargs ? dict_get_str(vm, c->kwargs, key) : EMPTY_VAL;
            if (IS_EMPTY(obj)) {
                Value kv = STR_VAL(key);
                vm_throw(vm, exc_new(vm, vm->exc[EXC_KeyError], 1, &kv));
            }
        }
    } else {
        if (idx >= c->args->len)
            vm_raise_kind(vm, IndexError, "Replacement index %lld out of range for positional args tuple",
                          (long long)idx);
        obj = c->args->items[idx];
    }
    while (i < n) {
        char ch = s[i++];
        size_t start = i;
        vm_push_root(vm, obj);
        if (ch == '.') {
            while (i < n && s[i] != '.' && s[i] != '[')
                i++;
            if (i == start)
                vm_raise_kind(vm, ValueError, "Empty attribute in format string");
            Str *name = str_new(vm, s + start, i - start);
            vm_push_root(vm, STR_VAL(name));
            obj = vm_getattr(vm, obj, name);
            vm_pop_roots(vm, 1);
        } else if (ch == '[') {
            while (i < n && s[i] != ']')
                i++;
            if (i >= n)
                vm_raise_kind(vm, ValueError, "Missing ']' in format string");
            size_t end = i++;
            if (end == start)
                vm_raise_kind(vm, ValueError, "Empty attribute in format string");
            int64_t k = field_integer(vm, s + start, end - start);
            Value key = k >= 0 ? INT_VAL(k) : STR_VAL(str_new(vm, s + start, end - start));
            vm_push_root(vm, key);
            obj = vm_getitem(vm, obj, key);
            vm_pop_roots(vm, 1);
        } else {
            vm_raise_kind(vm, ValueError, "Only '.' or '[' may follow ']' in format field specifier");
        }
        vm_pop_roots(vm, 1);
    }
    return obj;
}

/* Appends format(obj, spec): builtin values directly, others via vm_format. */
static void format_into(VM *vm, StrBuf *sb, Value obj, const char *spec, size_t slen) {
    Spec f;
    if (IS_INT(obj)) {
        if (slen == 0) {
            sb_int(sb, AS_INT(obj));
            return;
        }
        parse_spec(vm, spec, slen, &f, 'd', '>', "int");
        fmt_int(vm, sb, AS_INT(obj), &f, "int");
    } else if (IS_FLOAT(obj)) {
        if (slen == 0) {
            double_to_sb(sb, AS_FLOAT(obj), 'r', 0, DF_ADD_DOT_0);
            return;
        }
        parse_spec(vm, spec, slen, &f, 0, '>', "float");
        fmt_float(vm, sb, AS_FLOAT(obj), &f, "float");
    } else if (IS_STR(vm, obj)) {
        if (slen == 0) {
            sb_append_str(sb, AS_STR(obj));
            return;
        }
        parse_spec(vm, spec, slen, &f, 's', '<', "str");
        fmt_str(vm, sb, AS_STR(obj), &f, "str");
    } else {
        Str *sp = str_new(vm, spec, slen);
        vm_push_root(vm, STR_VAL(sp));
        Str *r = vm_format(vm, obj, sp);
        vm_pop_roots(vm, 1);
        sb_append_str(sb, r);
    }
}

static void build_string(VM *vm, Fmt *c, const char *s, size_t n, int depth);

/* Renders one replacement field (output_markup). */
static void render_field(VM *vm, Fmt *c, const char *name, size_t nlen, uint32_t conv, const char *spec,
                         size_t slen, bool expand, int depth) {
    int32_t nroots = vm->nroots;
    Value obj = get_field(vm, c, name, nlen);
    vm_push_root(vm, obj);
    if (conv) {
        switch (conv) {
        case 'r': obj = STR_VAL(vm_repr(vm, obj)); break;
        case 's': obj = STR_VAL(vm_str(vm, obj)); break;
        case 'a': obj = STR_VAL(str_to_ascii(vm, vm_repr(vm, obj))); break;
        default:
            if (conv > 32 && conv < 127)
                vm_raise_kind(vm, ValueError, "Unknown conversion specifier %c", (char)conv);
            vm_raise_kind(vm, ValueError, "Unknown conversion specifier \\x%x", (unsigned)conv);
        }
        vm_push_root(vm, obj);
    }
    if (expand) {
        /* expand nested fields at the end of the output, then take them back */
        size_t mark = c->sb.len;
        build_string(vm, c, spec, slen, depth - 1);
        if (sb_failed(&c->sb))
            no_memory(vm);
        Str *sp = str_new(vm, c->sb.data ? c->sb.data + mark : "", c->sb.len - mark);
        c->sb.len = mark;
        vm_push_root(vm, STR_VAL(sp));
        format_into(vm, &c->sb, obj, sp->chars, (size_t)sp->len);
    } else {
        format_into(vm, &c->sb, obj, spec, slen);
    }
    if (sb_failed(&c->sb))
        no_memory(vm);
    vm_pop_roots(vm, vm->nroots - nroots);
}

/* MarkupIterator + parse_field: literal text and {fields} of s. */
static void build_string(VM *vm, Fmt *c, const char *s, size_t n, int depth) {
    if (depth <= 0)
        vm_raise_kind(vm, ValueError, "Max string recursion exceeded");
    size_t pos = 0;
    while (pos < n) {
        size_t start = pos;
        char ch = 0;
        bool markup = false;
        while (pos < n) {
            ch = s[pos++];
            if (ch == '{' || ch == '}') {
                markup = true;
                break;
            }
        }
        bool at_end = pos >= n;
        size_t len = pos - start;
        if (markup && ch == '}' && (at_end || s[pos] != '}'))
            vm_raise_kind(vm, ValueError, "Single '}' encountered in format string");
        if (markup && at_end && ch == '{')
            vm_raise_kind(vm, ValueError, "Single '{' encountered in format string");
        if (markup) {
            if (s[pos] == ch) {
                pos++; /* escaped brace: literal text only */
                markup = false;
            } else {
                len--;
            }
        }
        sb_append(&c->sb, s + start, len);
        if (!markup)
            continue;
        /* the field name runs to ':', '!' or '}' (brackets skipped) */
        size_t fstart = pos;
        ch = 0;
        while (pos < n) {
            ch = s[pos++];
            if (ch == '{')
                vm_raise_kind(vm, ValueError, "unexpected '{' in field name");
            if (ch == '[') {
                while (pos < n && s[pos] != ']')
                    pos++;
                ch = 0;
                continue;
            }
            if (ch == '}' || ch == ':' || ch == '!')
                break;
            ch = 0;
        }
        size_t fend = pos - 1;
        if (ch == 0)
            fend = pos; /* ran off the end */
        uint32_t conv = 0;
        const char *spec = "";
        size_t slen = 0;
        bool expand = false;
        if (ch == '!' || ch == ':') {
            if (ch == '!') {
                if (pos >= n)
                    vm_raise_kind(vm, ValueError, "end of string while looking for conversion specifier");
                conv = uc_decode(s, &pos);
                if (pos < n) {
                    char c2 = s[pos++];
                    if (c2 == '}')
                        goto render;
                    if (c2 != ':')
                        vm_raise_kind(vm, ValueError, "expected ':' after conversion specifier");
                }
            }
            size_t sstart = pos;
            int count = 1;
            while (pos < n) {
                char c2 = s[pos++];
                if (c2 == '{') {
                    expand = true;
                    count++;
                } else if (c2 == '}') {
                    if (--count == 0) {
                        spec = s + sstart;
                        slen = pos - 1 - sstart;
                        goto render;
                    }
                }
            }
            vm_raise_kind(vm, ValueError, "unmatched '{' in format spec");
        } else if (ch != '}') {
            vm_raise_kind(vm, ValueError, "expected '}' before end of string");
        }
    render:
        render_field(vm, c, s + fstart, fend - fstart, conv, spec, slen, expand, depth);
    }
}

static void fmt_job(VM *vm, void *ud) {
    Fmt *c = ud;
    build_string(vm, c, c->fmt->chars, (size_t)c->fmt->len, 2);
}

/* Runs the formatter protected: on an exception the buffer is freed and
** the exception re-raised. */
static Str *run_format(VM *vm, Fmt *c) {
    if (!memchr(c->fmt->chars, '{', (size_t)c->fmt->len) && !memchr(c->fmt->chars, '}', (size_t)c->fmt->len))
        return c->fmt;
    sb_init(&c->sb);
    if (!vm_pcall(vm, fmt_job, c)) {
        sb_free(&c->sb);
        vm_rethrow(vm, vm->exc_value);
    }
    return sb_finish(vm, &c->sb);
}

Str *str_format_method(VM *vm, Str *fmt, int argc, Value *argv, Dict *kwargs) {
    int32_t nroots = vm->nroots;
    vm_push_root(vm, STR_VAL(fmt));
    if (kwargs)
        vm_push_root(vm, OBJ_VAL(kwargs));
    /* argv may live on the VM stack: keep a copy across calls into gpy code */
    Tuple *args = tuple_from_array(vm, argc, argv);
    vm_push_root(vm, OBJ_VAL(args));
    Fmt c;
    c.fmt = fmt;
    c.args = args;
    c.kwargs = kwargs;
    c.mapping = EMPTY_VAL;
    c.auto_state = 0;
    c.auto_next = 0;
    Str *r = run_format(vm, &c);
    vm_pop_roots(vm, vm->nroots - nroots);
    return r;
}

/* ---- the str methods living here ---- */

static Str *fmt_self(VM *vm, const char *name, int argc, Value *argv) {
    if (argc < 1 || !IS_STR(vm, argv[0]))
        vm_raise_kind(vm, TypeError, "descriptor '%s' for 'str' objects doesn't apply to a '%s' object", name,
                      argc < 1 ? "NoneType" : vm_type_name(vm, argv[0]));
    return AS_STR(argv[0]);
}

Value str_m_format(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *self = fmt_self(vm, "format", argc, argv);
    return STR_VAL(str_format_method(vm, self, argc - 1, argv + 1, kwargs));
}

Value str_m_format_map(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *self = fmt_self(vm, "format_map", argc, argv);
    if (kwargs && kwargs->count > 0)
        vm_raise_kind(vm, TypeError, "str.format_map() takes no keyword arguments");
    if (argc != 2)
        vm_raise_kind(vm, TypeError, "str.format_map() takes exactly one argument (%d given)", argc - 1);
    int32_t nroots = vm->nroots;
    Value mapping = argv[1];
    vm_push_root(vm, STR_VAL(self));
    vm_push_root(vm, mapping);
    Fmt c;
    c.fmt = self;
    c.args = NULL;
    c.kwargs = NULL;
    c.mapping = mapping;
    c.auto_state = 0;
    c.auto_next = 0;
    Str *r = run_format(vm, &c);
    vm_pop_roots(vm, vm->nroots - nroots);
    return STR_VAL(r);
}

Value str_m_dunder_format(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Str *self = fmt_self(vm, "__format__", argc, argv);
    if (kwargs && kwargs->count > 0)
        vm_raise_kind(vm, TypeError, "str.__format__() takes no keyword arguments");
    if (argc != 2)
        vm_raise_kind(vm, TypeError, "str.__format__() takes exactly one argument (%d given)", argc - 1);
    if (!IS_STR(vm, argv[1]))
        vm_raise_kind(vm, TypeError, "__format__() argument must be str, not %s", vm_type_name(vm, argv[1]));
    return STR_VAL(format_str_spec(vm, self, AS_STR(argv[1])));
}
