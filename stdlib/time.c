/*
** time.c — the time module: clocks (time, perf_counter, monotonic,
** process_time and their _ns variants), sleep, and calendar conversions
** through struct_time (gmtime, localtime, mktime, strftime, strptime,
** asctime, ctime).
*/
#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "signals.h"
#include "stdlib_priv.h"

static const char *const stime_fields[] = {"tm_year", "tm_mon", "tm_mday", "tm_hour", "tm_min", "tm_sec",
                                           "tm_wday", "tm_yday", "tm_isdst", "tm_zone", "tm_gmtoff"};

static int64_t clock_ns(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void no_args(VM *vm, const char *name, int argc, Dict *kwargs) {
    kw_none(vm, name, kwargs);
    if (argc) vm_raise_kind(vm, TypeError, "time.%s() takes no arguments (%d given)", name, argc);
}

#define CLOCK_FN(name, id)                                                            \
    static Value t_##name(VM *vm, int argc, Value *argv, Dict *kwargs) {              \
        (void)argv;                                                                   \
        no_args(vm, #name, argc, kwargs);                                             \
        return FLOAT_VAL((double)clock_ns(id) / 1e9);                                 \
    }                                                                                 \
    static Value t_##name##_ns(VM *vm, int argc, Value *argv, Dict *kwargs) {         \
        (void)argv;                                                                   \
        no_args(vm, #name "_ns", argc, kwargs);                                       \
        return INT_VAL(clock_ns(id));                                                 \
    }

CLOCK_FN(time, CLOCK_REALTIME)
CLOCK_FN(perf_counter, CLOCK_MONOTONIC)
CLOCK_FN(monotonic, CLOCK_MONOTONIC)
CLOCK_FN(process_time, CLOCK_PROCESS_CPUTIME_ID)
CLOCK_FN(thread_time, CLOCK_THREAD_CPUTIME_ID)

static Value t_sleep(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "sleep", kwargs);
    if (argc != 1) vm_raise_kind(vm, TypeError, "time.sleep() takes exactly one argument (%d given)", argc);
    Value v = argv[0];
    double secs;
    if (IS_FLOAT(v)) secs = AS_FLOAT(v);
    else if (IS_INTLIKE(v)) secs = (double)AS_INTLIKE(v);
    else vm_raise_kind(vm, TypeError, "'%s' object cannot be interpreted as an integer", vm_type_name(vm, v));
    if (isnan(secs)) vm_raise_kind(vm, ValueError, "Invalid value NaN (not a number)");
    if (secs < 0) vm_raise_kind(vm, ValueError, "sleep length must be non-negative");
    if (secs > 9.2e9) vm_raise_kind(vm, OverflowError, "sleep length is too large");
    fflush(stdout);
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    time_t whole = (time_t)secs;
    deadline.tv_sec += whole;
    deadline.tv_nsec += (long)((secs - (double)whole) * 1e9);
    if (deadline.tv_nsec >= 1000000000) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000;
    }
    /* an interrupt request (Ctrl-C, gpy_interrupt) ends the sleep with
    ** KeyboardInterrupt, also one that came just before it. A request from
    ** another thread sends no signal, so the sleep goes in slices of at most
    ** 10 ms toward an absolute deadline (no drift); other signals resume it. */
    vm_check_signals(vm);
    for (;;) {
        struct timespec now, until;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > deadline.tv_sec || (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec)) break;
        until = now;
        until.tv_nsec += 10000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        if (until.tv_sec > deadline.tv_sec || (until.tv_sec == deadline.tv_sec && until.tv_nsec > deadline.tv_nsec))
            until = deadline;
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
        vm_check_signals(vm);
    }
    return NONE_VAL;
}

/* ------------------------------------------------------------------ */
/* struct_time <-> struct tm                                           */
/* ------------------------------------------------------------------ */

static Value stime_from_tm(VM *vm, const struct tm *tm) {
    Value v[11];
    v[0] = INT_VAL(tm->tm_year + 1900);
    v[1] = INT_VAL(tm->tm_mon + 1);
    v[2] = INT_VAL(tm->tm_mday);
    v[3] = INT_VAL(tm->tm_hour);
    v[4] = INT_VAL(tm->tm_min);
    v[5] = INT_VAL(tm->tm_sec);
    v[6] = INT_VAL((tm->tm_wday + 6) % 7);
    v[7] = INT_VAL(tm->tm_yday + 1);
    v[8] = INT_VAL(tm->tm_isdst);
    v[9] = tm->tm_zone ? STR_VAL(str_cstr(vm, tm->tm_zone)) : NONE_VAL;
    v[10] = INT_VAL(tm->tm_gmtoff);
    vm_push_root(vm, v[9]);
    Value r = structseq_new(vm, "time.struct_time", stime_fields, 11, 9, v);
    vm_pop_roots(vm, 1);
    return r;
}

/* A time tuple (struct_time or 9-tuple) into a struct tm. */
static void tm_from_value(VM *vm, Value t, struct tm *tm) {
    Value items[9];
    memset(tm, 0, sizeof *tm);
    if (structseq_check(vm, t, "time.struct_time")) {
        for (int i = 0; i < 9; i++) items[i] = structseq_field(vm, t, i);
        Value gmtoff = structseq_field(vm, t, 10);
        if (IS_INTLIKE(gmtoff)) tm->tm_gmtoff = AS_INTLIKE(gmtoff);
    } else if (IS_TUPLE(vm, t)) {
        Tuple *tp = AS_TUPLE(t);
        if (tp->len != 9)
            vm_raise_kind(vm, TypeError, "time.struct_time() takes a 9-sequence (%lld-sequence given)",
                          (long long)tp->len);
        for (int i = 0; i < 9; i++) items[i] = tp->items[i];
    } else {
        vm_raise_kind(vm, TypeError, "Tuple or struct_time argument required");
    }
    int64_t f[9];
    for (int i = 0; i < 9; i++) f[i] = vm_to_index(vm, items[i]);
    tm->tm_year = (int)(f[0] - 1900);
    tm->tm_mon = (int)(f[1] - 1);
    tm->tm_mday = (int)f[2];
    tm->tm_hour = (int)f[3];
    tm->tm_min = (int)f[4];
    tm->tm_sec = (int)f[5];
    tm->tm_wday = (int)((f[6] + 1) % 7);
    tm->tm_yday = (int)(f[7] - 1);
    tm->tm_isdst = (int)f[8];
}

/* Range checks of time.strftime/asctime (CPython's checktm). */
static void check_tm(VM *vm, struct tm *tm) {
    if (tm->tm_mon == -1) tm->tm_mon = 0;
    else if (tm->tm_mon < 0 || tm->tm_mon > 11) vm_raise_kind(vm, ValueError, "month out of range");
    if (tm->tm_mday == 0) tm->tm_mday = 1;
    else if (tm->tm_mday < 0 || tm->tm_mday > 31) vm_raise_kind(vm, ValueError, "day of month out of range");
    if (tm->tm_hour < 0 || tm->tm_hour > 23) vm_raise_kind(vm, ValueError, "hour out of range");
    if (tm->tm_min < 0 || tm->tm_min > 59) vm_raise_kind(vm, ValueError, "minute out of range");
    if (tm->tm_sec < 0 || tm->tm_sec > 61) vm_raise_kind(vm, ValueError, "seconds out of range");
    if (tm->tm_wday < 0) vm_raise_kind(vm, ValueError, "day of week out of range");
    if (tm->tm_yday == -1) tm->tm_yday = 0;
    else if (tm->tm_yday < 0 || tm->tm_yday > 365) vm_raise_kind(vm, ValueError, "day of year out of range");
}

static time_t secs_arg(VM *vm, int argc, Value *argv) {
    if (argc == 0 || IS_NONE(argv[0])) return time(NULL);
    Value v = argv[0];
    double d;
    if (IS_FLOAT(v)) {
        d = AS_FLOAT(v);
        if (isnan(d)) vm_raise_kind(vm, ValueError, "Invalid value NaN (not a number)");
    } else if (IS_INTLIKE(v)) {
        return (time_t)AS_INTLIKE(v);
    } else {
        vm_raise_kind(vm, TypeError, "'%s' object cannot be interpreted as an integer", vm_type_name(vm, v));
    }
    if (!(d > -9.2e18 && d < 9.2e18)) vm_raise_kind(vm, OverflowError, "timestamp out of range for platform time_t");
    return (time_t)floor(d);
}

static Value t_gmtime(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "gmtime", kwargs);
    arg_between(vm, "gmtime", argc, 0, 1);
    time_t t = secs_arg(vm, argc, argv);
    struct tm tm;
    if (!gmtime_r(&t, &tm)) vm_raise_kind(vm, OverflowError, "timestamp out of range for platform time_t");
    return stime_from_tm(vm, &tm);
}

static Value t_localtime(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "localtime", kwargs);
    arg_between(vm, "localtime", argc, 0, 1);
    time_t t = secs_arg(vm, argc, argv);
    struct tm tm;
    if (!localtime_r(&t, &tm)) vm_raise_kind(vm, OverflowError, "timestamp out of range for platform time_t");
    return stime_from_tm(vm, &tm);
}

static Value t_mktime(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "mktime", kwargs);
    if (argc != 1) vm_raise_kind(vm, TypeError, "time.mktime() takes exactly one argument (%d given)", argc);
    struct tm tm;
    tm_from_value(vm, argv[0], &tm);
    tm.tm_wday = -1;
    time_t t = mktime(&tm);
    if (t == (time_t)-1 && tm.tm_wday == -1) vm_raise_kind(vm, OverflowError, "mktime argument out of range");
    return FLOAT_VAL((double)t);
}

static Value t_strftime(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "strftime", kwargs);
    arg_between(vm, "strftime", argc, 1, 2);
    if (!IS_STR(vm, argv[0]))
        vm_raise_kind(vm, TypeError, "strftime() argument 1 must be str, not %s", vm_type_name(vm, argv[0]));
    Str *fmt = AS_STR(argv[0]);
    struct tm tm;
    if (argc == 2) {
        tm_from_value(vm, argv[1], &tm);
        check_tm(vm, &tm);
    } else {
        time_t now = time(NULL);
        localtime_r(&now, &tm);
    }
    if (fmt->len == 0) return STR_VAL(vm->empty_str);
    char small[256];
    size_t cap = sizeof small;
    char *buf = small;
    for (;;) {
        size_t n = strftime(buf, cap, fmt->chars, &tm);
        if (n > 0 || cap > (size_t)fmt->len * 256 + 1024) {
            Str *s = str_new(vm, buf, n);
            if (buf != small) gc_free(vm, buf, cap);
            return STR_VAL(s);
        }
        if (buf != small) gc_free(vm, buf, cap);
        cap *= 4;
        buf = gc_malloc(vm, cap);
    }
}

static Value t_strptime(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "strptime", kwargs);
    arg_between(vm, "strptime", argc, 1, 2);
    if (!IS_STR(vm, argv[0]))
        vm_raise_kind(vm, TypeError, "strptime() argument 0 must be str, not %s", vm_type_name(vm, argv[0]));
    const char *fmt = "%a %b %d %H:%M:%S %Y";
    Str *fmts = NULL;
    if (argc == 2) {
        if (!IS_STR(vm, argv[1]))
            vm_raise_kind(vm, TypeError, "strptime() argument 1 must be str, not %s", vm_type_name(vm, argv[1]));
        fmts = AS_STR(argv[1]);
        fmt = fmts->chars;
    }
    Str *s = AS_STR(argv[0]);
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    tm.tm_mday = 1;
    const char *end = strptime(s->chars, fmt, &tm);
    if (!end) {
        Str *rs = str_repr(vm, s);
        vm_push_root(vm, OBJ_VAL(rs));
        Str *rf = str_repr(vm, fmts ? fmts : str_cstr(vm, fmt));
        vm_raise_kind(vm, ValueError, "time data %s does not match format %s", rs->chars, rf->chars);
    }
    if (*end) vm_raise_kind(vm, ValueError, "unconverted data remains: %s", end);
    /* weekday and day of the year from the date */
    struct tm copy = tm;
    copy.tm_hour = 12;
    time_t t = timegm(&copy);
    struct tm full;
    if (gmtime_r(&t, &full)) {
        tm.tm_wday = full.tm_wday;
        tm.tm_yday = full.tm_yday;
    }
    tm.tm_isdst = -1;
    tm.tm_zone = NULL;
    tm.tm_gmtoff = 0;
    Value r = stime_from_tm(vm, &tm);
    return r;
}

static Str *asctime_of(VM *vm, const struct tm *tm) {
    static const char wday[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char mon[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    return str_printf(vm, "%s %s%3d %.2d:%.2d:%.2d %d", wday[(tm->tm_wday % 7 + 7) % 7],
                      mon[(tm->tm_mon % 12 + 12) % 12], tm->tm_mday, tm->tm_hour, tm->tm_min, tm->tm_sec,
                      1900 + tm->tm_year);
}

static Value t_asctime(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "asctime", kwargs);
    arg_between(vm, "asctime", argc, 0, 1);
    struct tm tm;
    if (argc == 1) {
        tm_from_value(vm, argv[0], &tm);
        check_tm(vm, &tm);
    } else {
        time_t now = time(NULL);
        localtime_r(&now, &tm);
    }
    return STR_VAL(asctime_of(vm, &tm));
}

static Value t_ctime(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "ctime", kwargs);
    arg_between(vm, "ctime", argc, 0, 1);
    time_t t = secs_arg(vm, argc, argv);
    struct tm tm;
    if (!localtime_r(&t, &tm)) vm_raise_kind(vm, OverflowError, "timestamp out of range for platform time_t");
    return STR_VAL(asctime_of(vm, &tm));
}

Module *stdlib_time(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "time"));
    vm_push_root(vm, OBJ_VAL(m));
    static const struct {
        const char *name;
        NativeFn fn;
    } fns[] = {
        {"time", t_time},
        {"time_ns", t_time_ns},
        {"perf_counter", t_perf_counter},
        {"perf_counter_ns", t_perf_counter_ns},
        {"monotonic", t_monotonic},
        {"monotonic_ns", t_monotonic_ns},
        {"process_time", t_process_time},
        {"process_time_ns", t_process_time_ns},
        {"thread_time", t_thread_time},
        {"thread_time_ns", t_thread_time_ns},
        {"sleep", t_sleep},
        {"gmtime", t_gmtime},
        {"localtime", t_localtime},
        {"mktime", t_mktime},
        {"strftime", t_strftime},
        {"strptime", t_strptime},
        {"asctime", t_asctime},
        {"ctime", t_ctime},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) module_add_function(vm, m, fns[i].name, fns[i].fn);
    /* time.struct_time: the type of gmtime()'s result */
    time_t zero = 0;
    struct tm tm0;
    gmtime_r(&zero, &tm0);
    Value st = stime_from_tm(vm, &tm0);
    dict_set_cstr(vm, m->dict, "struct_time", OBJ_VAL(AS_OBJ(st)->type));
    tzset();
    dict_set_cstr(vm, m->dict, "timezone", INT_VAL(timezone));
    dict_set_cstr(vm, m->dict, "altzone", INT_VAL(daylight ? timezone - 3600 : timezone));
    dict_set_cstr(vm, m->dict, "daylight", INT_VAL(daylight));
    Tuple *tzn = tuple_new(vm, 2);
    dict_set_cstr(vm, m->dict, "tzname", OBJ_VAL(tzn));
    tzn->items[0] = STR_VAL(str_cstr(vm, tzname[0]));
    tzn->items[1] = STR_VAL(str_cstr(vm, tzname[1]));
    vm_pop_roots(vm, 1);
    return m;
}
