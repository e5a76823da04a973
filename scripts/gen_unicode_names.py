#!/usr/bin/env python3
"""Generates vm/unicode_names.c: the Unicode character name database that
\\N{...} escapes and the unicodedata module use (names -> code points and
back), from CPython's unicodedata (run it with CPython 3.11: Unicode 14.0).

Layout (all generated as byte strings, about 0.36 MB in all):
  - names of the form PREFIX-XXXX (CJK UNIFIED IDEOGRAPH-4E00, TANGUT
    IDEOGRAPH-17000, ...) become code point ranges per prefix; Hangul
    syllables are computed by the C code; neither is stored;
  - every other name is a list of words: a lexicon holds each distinct word
    once (the most frequent get 1-byte codes), a name is its word codes;
  - entries are sorted by code point, in blocks of BLOCK entries; each block
    records its byte offset and first code point, each entry its code point
    delta, its byte length and its word codes;
  - the entry numbers in name order (lookups binary-search them);
  - name aliases (NameAliases.txt: CONTROL, CORRECTION, ...) that CPython's
    \\N{} accepts are a small sorted table. unicodedata cannot list them, so
    the candidates come from Perl's copy of the database (unicore/Name.pl)
    and each is kept only when CPython's unicodedata.lookup and a \\N{} escape
    both accept it.
Usage: python3 scripts/gen_unicode_names.py > vm/unicode_names.c
"""
import glob
import re
import sys
import unicodedata

BLOCK = 16
ONE = 192  # word codes below this take one byte
PREFIXES = ["CJK UNIFIED IDEOGRAPH-", "CJK COMPATIBILITY IDEOGRAPH-", "TANGUT IDEOGRAPH-",
            "KHITAN SMALL SCRIPT CHARACTER-", "NUSHU CHARACTER-"]


def main():
    assert unicodedata.unidata_version == "14.0.0", unicodedata.unidata_version
    entries = []            # (cp, name) stored as words
    ranges = {p: [] for p in PREFIXES}
    for cp in range(0x110000):
        name = unicodedata.name(chr(cp), None)
        if name is None or name.startswith("HANGUL SYLLABLE "):
            continue
        pre = next((p for p in PREFIXES if name == "%s%04X" % (p, cp)), None)
        if pre:
            r = ranges[pre]
            if r and r[-1][1] == cp - 1:
                r[-1][1] = cp
            else:
                r.append([cp, cp])
            continue
        entries.append((cp, name))
    # every Hangul syllable name is the algorithmic one
    for cp in range(0xAC00, 0xD7A4):
        assert unicodedata.name(chr(cp)).startswith("HANGUL SYLLABLE ")

    # words: split at spaces and hyphens; code 0 means "the next separator is '-'"
    def words(name):
        parts = re.split(r"([ -])", name)
        out = [parts[0]]
        for i in range(1, len(parts), 2):
            out.append((parts[i], parts[i + 1]))
        return out

    freq = {}
    for cp, name in entries:
        ws = words(name)
        for w in [ws[0]] + [p[1] for p in ws[1:]]:
            freq[w] = freq.get(w, 0) + 1
    lexicon = sorted(freq, key=lambda w: (-freq[w], w))
    # codes: 1..ONE-1 one byte; then two bytes (ONE + hi, lo)
    assert len(lexicon) < ONE + (256 - ONE) * 256
    index = {w: i + 1 for i, w in enumerate(lexicon)}

    def code(i):
        if i < ONE:
            return [i]
        j = i - ONE
        return [ONE + (j >> 8), j & 0xFF]

    def encode(name, skip):
        """The word codes of name after its first `skip` words."""
        ws = words(name)
        out = [] if skip else code(index[ws[0]])
        for k, (sep, w) in enumerate(ws[1:], 1):
            if k < skip:
                continue
            if sep == "-":
                out += [0]
            out += code(index[w])
        return out

    def shared(a, b):
        """How many leading words (and separators) names a and b share."""
        wa, wb = words(a), words(b)
        n = 0
        while n < len(wa) and n < len(wb) and wa[n] == wb[n] and n < 15:
            n += 1
        return n

    data = bytearray()
    blocks = []
    prev = 0
    prev_name = ""
    for i, (cp, name) in enumerate(entries):
        if i % BLOCK == 0:
            blocks.append((len(data), cp))
            prev = cp
            prev_name = ""
        delta = cp - prev
        prev = cp
        # delta as a varint (7 bits a byte, high bit: more follows)
        while True:
            b = delta & 0x7F
            delta >>= 7
            data.append(b | (0x80 if delta else 0))
            if not delta:
                break
        # a byte: words shared with the previous entry of the block (high
        # 4 bits) and, when it fits, the length of the rest (low 4 bits, 0:
        # a length byte follows)
        skip = shared(prev_name, name) if prev_name else 0
        enc = encode(name, skip)
        assert len(enc) < 256
        if 0 < len(enc) < 16:
            data.append(skip << 4 | len(enc))
        else:
            data.append(skip << 4)
            data.append(len(enc))
        data += bytes(enc)
        prev_name = name

    # entry numbers in name order: lookups binary-search them
    order = sorted(range(len(entries)), key=lambda i: entries[i][1])
    assert len(entries) < 0x10000

    lex = bytearray()
    lexoff = []
    for w in lexicon:
        lexoff.append(len(lex))
        lex += w.encode("ascii")
    lexoff.append(len(lex))

    aliases = find_aliases()

    o = sys.stdout
    o.write("/* Generated by scripts/gen_unicode_names.py from CPython's unicodedata\n"
            "** (Unicode %s): do not edit. See unicode_names.h. */\n" % unicodedata.unidata_version)
    o.write('#include "unicode_names_data.h"\n\n')
    o.write("const uint32_t un_nentries = %d;\n" % len(entries))
    o.write("const uint32_t un_block = %d;\n" % BLOCK)
    o.write("const uint32_t un_nwords = %d;\n" % len(lexicon))

    def blob(name, data):
        """data as a string literal (printable bytes as themselves)."""
        o.write("const uint8_t %s[%d] =\n" % (name, len(data) + 1))
        line = ""
        for b in data:
            c = chr(b)
            if c in '"\\?' or not (32 <= b < 127):
                c = "\\%03o" % b
            line += c
            if len(line) >= 100:
                o.write('    "%s"\n' % line)
                line = ""
        o.write('    "%s";\n' % line)

    def le(values, width):
        return b"".join(v.to_bytes(width, "little") for v in values)

    blob("un_block_offset", le([b[0] for b in blocks], 4))
    blob("un_block_first", le([b[1] for b in blocks], 3))
    blob("un_data", data)
    blob("un_sorted", le(order, 2))
    blob("un_word_offset", le(lexoff, 4))
    blob("un_words", lex)
    o.write("const UnicodeNameRange un_ranges[%d] = {\n" % sum(len(r) for r in ranges.values()))
    for p in PREFIXES:
        for lo, hi in ranges[p]:
            o.write('    {"%s", 0x%X, 0x%X},\n' % (p, lo, hi))
    o.write("};\n")
    o.write("const uint32_t un_nranges = %d;\n" % sum(len(r) for r in ranges.values()))
    o.write("const UnicodeNameAlias un_aliases[%d] = {\n" % len(aliases))
    for name, cp in aliases:
        o.write('    {"%s", 0x%X},\n' % (name, cp))
    o.write("};\n")
    o.write("const uint32_t un_naliases = %d;\n" % len(aliases))
    sys.stderr.write("entries %d, words %d, data %d bytes, lexicon %d bytes, aliases %d\n"
                     % (len(entries), len(lexicon), len(data), len(lex), len(aliases)))


def find_aliases():
    found = {}
    for path in sorted(glob.glob("/usr/share/perl/*/unicore/Name.pl")):
        text = open(path, encoding="ascii", errors="replace").read()
        for m in re.finditer(r"^([0-9A-F]{4,6})\n([A-Z0-9][A-Z0-9 \-]*)$", text, re.M):
            cp, name = int(m.group(1), 16), m.group(2)
            if unicodedata.name(chr(cp), None) == name:
                continue
            try:
                if unicodedata.lookup(name) != chr(cp):
                    continue
                if eval('"\\N{%s}"' % name) != chr(cp):
                    continue
            except (KeyError, SyntaxError):
                continue
            found[name] = cp
    if not found:
        sys.exit("no alias candidates: Perl's unicore/Name.pl (perl-modules) is needed")
    return sorted(found.items())


main()
