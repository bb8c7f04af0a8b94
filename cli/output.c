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

static void em_json_str(const char *s)
{
	putchar('"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", stdout);
		else if (*p == '\t')
			fputs("\\t", stdout);
		else if (*p < 0x20)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
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
		printf("%s %s", key, val);
	} else {
		em_indent();
		printf("%s: %s\n", key, val);
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
	char buf[1024];

	if (ctl.json || !f || f->style != EM_LINE) {
		em_str(key, val);
		return;
	}
	snprintf(buf, sizeof(buf), "%s%s", label, val);
	if (!f->line_open)
		em_indent();
	else
		fputs("  ", stdout);
	f->line_open = true;
	fputs(buf, stdout);
}
