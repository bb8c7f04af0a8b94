/* SPDX-License-Identifier: BSD-2-Clause */
/* output.c - unetctl's one printing path: an emitter that writes
 * either text or JSON from the same calls (em_*). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unetctl.h"

struct em_frame {
	bool is_array;
	enum em_style style;
	bool has_items;	  /* JSON: a comma goes before the next item */
	bool line_open;	  /* text LINE object: something printed on the line */
	bool indented;	  /* text: this array raised the indent */
	bool wrapped;	  /* JSON: a top-level array inside {"schema_version"..} */
};

static struct {
	int depth;
	struct em_frame f[16];
	int indent;
	int top_blocks; /* text ROWS blocks printed at indent 0 */
} em;

/*
 * Strings printed here come from other users too: a process's name, a
 * device's, a client's.  Whatever their bytes, the text output cannot
 * move root's cursor, end a row or forge one, and the JSON output stays
 * valid: both print ASCII only, escaped.
 */

/* The UTF-8 sequence at p: its length, with its code point in *cp.  Bytes
 * that are not UTF-8 (overlong, a surrogate, beyond U+10FFFF, cut short,
 * a stray continuation) give U+FFFD for their longest start that could
 * have been valid, at least one byte (Unicode's "maximal subpart", as
 * most decoders replace them).  A NUL ends a sequence as any ASCII does,
 * so nothing past the string is read. */
static size_t utf8_next(const unsigned char *p, uint32_t *cp)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;
	uint32_t v;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
		v = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		v = p[0] & 0x0f;
		if (p[0] == 0xe0)
			lo = 0xa0; /* overlong below */
		if (p[0] == 0xed)
			hi = 0x9f; /* surrogates above */
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		v = p[0] & 0x07;
		if (p[0] == 0xf0)
			lo = 0x90; /* overlong below */
		if (p[0] == 0xf4)
			hi = 0x8f; /* beyond U+10FFFF above */
	} else {
		*cp = 0xfffd;
		return 1;
	}
	for (i = 1; i < len; i++) {
		if (p[i] < lo || p[i] > hi) {
			*cp = 0xfffd;
			return i;
		}
		v = v << 6 | (p[i] & 0x3f);
		lo = 0x80;
		hi = 0xbf;
	}
	*cp = v;
	return len;
}

/* JSON: printable ASCII as it is, the rest as \u escapes of its code
 * points (UTF-16 pairs beyond U+FFFF), what is not UTF-8 as U+FFFD. */
static void em_json_str(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;

	putchar('"');
	while (*p) {
		p += utf8_next(p, &cp);
		if (cp == '"' || cp == '\\')
			printf("\\%c", (int)cp);
		else if (cp == '\n')
			fputs("\\n", stdout);
		else if (cp == '\t')
			fputs("\\t", stdout);
		else if (cp >= 0x20 && cp < 0x7f)
			putchar((int)cp);
		else if (cp < 0x10000)
			printf("\\u%04x", (unsigned int)cp);
		else
			printf("\\u%04x\\u%04x", 0xd800u + ((cp - 0x10000) >> 10),
			       0xdc00u + ((cp - 0x10000) & 0x3ff));
	}
	putchar('"');
}

/* Text: printable ASCII as it is, every other byte as \xNN, and a
 * backslash as \\ so that an escape reads one way only. */
static void em_text_str(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", stdout);
		else if (*p >= 0x20 && *p < 0x7f)
			putchar(*p);
		else
			printf("\\x%02x", *p);
	}
}

static struct em_frame *em_top(void)
{
	return em.depth ? &em.f[em.depth - 1] : NULL;
}

/* JSON: the comma and key in front of an item. */
static void em_json_item(const char *key)
{
	struct em_frame *f = em_top();

	if (f) {
		if (f->has_items)
			putchar(',');
		f->has_items = true;
		if (!f->is_array && key) {
			em_json_str(key);
			putchar(':');
		}
	}
}

static void em_indent(void)
{
	for (int i = 0; i < em.indent; i++)
		fputs("  ", stdout);
}

static void em_push(bool is_array, enum em_style style, bool indented)
{
	struct em_frame *f;

	if (em.depth == (int)(sizeof(em.f) / sizeof(em.f[0])))
		abort(); /* a bug in this file, not a user error */
	f = &em.f[em.depth++];
	memset(f, 0, sizeof(*f));
	f->is_array = is_array;
	f->style = style;
	f->indented = indented;
}

/* JSON: the first member of every document. */
static void em_json_schema(void)
{
	printf("\"schema_version\":%d", UNETCTL_JSON_SCHEMA);
	em_top()->has_items = true;
}

static void em_pop_done(void)
{
	em.depth--;
	if (ctl.json && em.depth == 0)
		putchar('\n');
}

/* Open an object (key NULL at top level or inside an array). */
void em_open(const char *key, enum em_style style)
{
	bool top = em.depth == 0;

	if (ctl.json) {
		em_json_item(key);
		putchar('{');
	} else if (style == EM_ROWS && em.indent == 0 && em.top_blocks++ > 0) {
		putchar('\n'); /* blank line between top-level blocks */
	}
	em_push(false, style, false);
	if (ctl.json && top)
		em_json_schema();
}

void em_close(void)
{
	struct em_frame *f = em_top();

	if (ctl.json)
		putchar('}');
	else if (f->style == EM_LINE && f->line_open)
		putchar('\n');
	em_pop_done();
}

/* Open an array under key.  At top level the key names the listing: JSON
 * gets {"schema_version":N,"key":[...]}, text only the elements. */
void em_open_array(const char *key)
{
	struct em_frame *parent = em_top();
	bool indented = false;

	if (ctl.json) {
		if (!parent) {
			putchar('{');
			em_push(false, EM_ROWS, false);
			em_json_schema();
		}
		em_json_item(key);
		putchar('[');
	} else if (parent && key) {
		em_indent();
		printf("%s:\n", key);
		em.indent++;
		indented = true;
	}
	em_push(true, EM_ROWS, indented);
	em_top()->wrapped = ctl.json && !parent;
}

void em_close_array(void)
{
	struct em_frame *f = em_top();
	bool wrapped = f->wrapped;

	if (ctl.json)
		putchar(']');
	else if (f->indented)
		em.indent--;
	em_pop_done();
	if (wrapped) {
		putchar('}');
		em_pop_done();
	}
}

/* The one place a value is printed.  quote: a JSON string. */
static void em_value(const char *key, const char *val, bool quote)
{
	struct em_frame *f = em_top();

	if (ctl.json) {
		em_json_item(key);
		if (quote)
			em_json_str(val);
		else
			fputs(val, stdout);
		return;
	}
	if (f && f->style == EM_LINE) {
		if (!f->line_open)
			em_indent();
		else
			fputs("  ", stdout);
		f->line_open = true;
		printf("%s ", key);
		em_text_str(val);
	} else {
		em_indent();
		printf("%s: ", key);
		em_text_str(val);
		putchar('\n');
	}
}

void em_str(const char *key, const char *val)
{
	em_value(key, val, true);
}

void em_u64(const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	em_value(key, buf, false);
}

void em_bool(const char *key, bool v)
{
	em_value(key, ctl.json ? (v ? "true" : "false") : (v ? "yes" : "no"), false);
}

/* A string whose text form in a LINE object is label + value, without the
 * key (doctor's "ok  euid  ...  fix: ..."); JSON as em_str. */
void em_bare(const char *key, const char *label, const char *val)
{
	struct em_frame *f = em_top();

	if (ctl.json || !f || f->style != EM_LINE) {
		em_str(key, val);
		return;
	}
	if (!f->line_open)
		em_indent();
	else
		fputs("  ", stdout);
	f->line_open = true;
	fputs(label, stdout);
	em_text_str(val);
}
