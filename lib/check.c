// SPDX-License-Identifier: LGPL-2.1-or-later
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hugepages.h"
#include "integrity.h"
#include "log.h"
#include "namespace.h"
#include "path.h"
#include "superblock.h"

#define AU FAMFS_ALLOC_UNIT
/* Entries walked between two waits for their integrity codes */
#define WAIT_EVERY 1024
/* How far ahead of the walk an entry's namespace slot is fetched: about the misses in flight */
#define PREFETCH_AHEAD 8
/* How far ahead an entry's prepared record is fetched (written on another CPU): before its slot */
#define FETCH_AHEAD 24
#define CHUNK FAMFS_INTEGRITY_CHUNK_ENTRIES
#define RING_ENTRIES (FAMFS_INTEGRITY_CHUNK_ENTRIES * FAMFS_INTEGRITY_RING_CHUNKS)
/* Room set aside for each entry's path copy (short names, as most are); more is found as needed */
#define NAME_BYTES_GUESS 16
/* Smaller logs are checked before a thread would have started */
#define PREFAULT_MIN 16384

/* One extent of one file, in allocation units, for the cross-link sweep. */
struct span {
	uint64_t start;   /* bytes, AU aligned */
	uint64_t end;     /* bytes, rounded up to AU */
	uint64_t index;   /* log entry */
};

/*
 * What the walk needs of an intact FILE or MKDIR entry, worked out on the
 * thread that read its chunk (see prepare_chunk), so that the walk, the
 * part of a check that cannot be split, only adds the name.
 */
struct entry_prep {
	char path[FAMFS_MAX_PATHLEN];   /* the entry's field, read once: a shared log can change meanwhile */
	struct famfs_ns_name name;      /* of path, when code is FAMFS_OK */
	uint64_t size;
	uint32_t mode, uid, gid;
	uint8_t type;
	uint8_t code;                   /* the path's and the map's check */
};

/* A chunk's spans, in entry order, collected with its entries' preparation */
struct chunk_spans {
	struct span *spans;
	size_t n, cap;
	bool oom;
};

struct checker {
	const uint8_t *base;
	int fd;                 /* >= 0: the log is read from here (see integrity.h) */
	uint64_t readable;      /* bytes mapped at base */
	uint64_t medium_size;
	struct famfs_check_report *r;
	const struct famfs_log_entry *entries;
	struct famfs_layout layout;
	struct famfs_ns *ns;
	struct span *spans;
	size_t nspans, spans_cap;
	uint8_t *integrity;     /* per written entry: FAMFS_OK or why it failed */
	struct famfs_integrity_pass *pass;      /* computing integrity[] meanwhile */
	struct famfs_prefault *prefault;        /* faulting in spans[] and the namespace meanwhile */
	struct entry_prep *prep;                /* entry i's at i % RING_ENTRIES */
	struct chunk_spans chunk_spans[FAMFS_INTEGRITY_RING_CHUNKS];
	size_t tail_finding_at; /* where the torn-tail finding goes, once the pass is done */
	bool oom;
};

static struct famfs_finding *add_finding(struct checker *c, enum famfs_severity sev,
					 enum famfs_finding_code code, int64_t index,
					 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static struct famfs_finding *add_finding(struct checker *c, enum famfs_severity sev,
					 enum famfs_finding_code code, int64_t index,
					 const char *fmt, ...)
{
	struct famfs_check_report *r = c->r;
	struct famfs_finding *f;
	va_list ap;

	r->by_severity[sev]++;
	if (r->per_code[code]++ >= FAMFS_CHECK_MAX_PER_CODE) {
		r->suppressed++;
		return NULL;
	}
	if (r->nfindings == r->capacity) {
		size_t cap = r->capacity ? r->capacity * 2 : 32;
		struct famfs_finding *nf = realloc(r->findings, cap * sizeof(*nf));

		if (!nf) {
			c->oom = true;
			return NULL;
		}
		r->findings = nf;
		r->capacity = cap;
	}
	f = &r->findings[r->nfindings++];
	memset(f, 0, sizeof(*f));
	f->severity = sev;
	f->code = code;
	f->index = index;
	f->other_index = -1;
	va_start(ap, fmt);
	vsnprintf(f->message, sizeof(f->message), fmt, ap);
	va_end(ap);
	return f;
}

static void set_path(char *dst, const char *field)
{
	size_t n = strnlen(field, FAMFS_MAX_PATHLEN);

	memcpy(dst, field, n);
	dst[n] = '\0';
}

static bool check_superblock(struct checker *c, const struct famfs_superblock **ret_sb)
{
	const struct famfs_superblock *sb = (const void *)c->base;
	struct famfs_check_summary *s = &c->r->summary;
	enum famfs_finding_code code;
	struct famfs_err err = {0};

	s->medium_size = c->medium_size;
	code = famfs_superblock_validate(sb, c->medium_size, &err);
	if (code != FAMFS_OK && code != FAMFS_F_SB_DEV_SIZE) {
		add_finding(c, FAMFS_SEV_FATAL, code, -1, "%s", err.msg);
		return false;
	}
	if (c->readable < c->medium_size && sb->log_len > c->readable - FAMFS_LOG_OFFSET) {
		add_finding(c, FAMFS_SEV_FATAL, FAMFS_F_SB_LOG_LEN, -1,
			    "the superblock gives a log of 0x%" PRIx64 " bytes, but only 0x%" PRIx64
			    " bytes of log are mapped to be read (the log length it had at attach)",
			    sb->log_len, c->readable - FAMFS_LOG_OFFSET);
		return false;
	}
	s->version = sb->version;
	s->omf_major = sb->omf_major;
	s->omf_minor = sb->omf_minor;
	memcpy(s->uuid, sb->uuid, 16);
	memcpy(s->system_uuid, sb->system_uuid, 16);
	s->capacity = sb->dev_size;
	s->log_len = sb->log_len;
	c->layout.dev_size = sb->dev_size;
	c->layout.log_len = sb->log_len;
	c->layout.alloc_unit = sb->alloc_unit;
	if (code == FAMFS_F_SB_DEV_SIZE) {
		add_finding(c, FAMFS_SEV_ERROR, code, -1, "%s; checking against the real size", err.msg);
		c->layout.dev_size = c->medium_size;
		s->capacity = c->medium_size;
		if (famfs_data_start(sb->log_len) > c->medium_size) {
			add_finding(c, FAMFS_SEV_FATAL, FAMFS_F_DEVICE_TOO_SMALL, -1,
				    "the log (0x%" PRIx64 " bytes at 2 MiB) lies past the end of the medium (%"
				    PRIu64 " bytes)", sb->log_len, c->medium_size);
			return false;
		}
	}
	s->superblock_valid = true;
	*ret_sb = sb;
	return true;
}

static bool entry_intact(const struct famfs_log_entry *e, uint64_t i)
{
	return famfs_log_entry_check_integrity(e, i, NULL) == FAMFS_OK;
}

static void prepare_chunk(void *arg, const struct famfs_log_entry *e, uint64_t first, uint64_t end);

/*
 * Starts computing integrity[0, end) in the background, and each chunk's
 * preparation with it; check_entry waits for each entry's.
 */
static int start_integrity(struct checker *c, uint64_t end)
{
	const struct famfs_integrity_hook hook = { .prepare = prepare_chunk, .arg = c };

	c->integrity = malloc(end ? end : 1);
	c->prep = malloc(sizeof(*c->prep) * (end < RING_ENTRIES ? (end ? end : 1) : RING_ENTRIES));
	if (!c->integrity || !c->prep)
		return -ENOMEM;
	famfs_advise_hugepages(c->integrity, end);
	return famfs_integrity_start(c->entries, end, c->fd, FAMFS_LOG_OFFSET + sizeof(struct famfs_log_header),
				     c->integrity, &hook, &c->pass);
}

/*
 * Decides which slots count as written and records what a repair would do.
 * Returns the number of slots to read, or UINT64_MAX when the header is
 * unreadable.
 */
static uint64_t check_log_header(struct checker *c, const struct famfs_superblock *sb)
{
	const struct famfs_log_header *h = (const void *)(c->base + FAMFS_LOG_OFFSET);
	struct famfs_check_summary *s = &c->r->summary;
	struct famfs_check_repair *rep = &c->r->repair;
	enum famfs_finding_code code;
	struct famfs_err err = {0};
	uint64_t slots = famfs_log_slots(sb->log_len), end;

	code = famfs_log_header_validate(h, sb->log_len, &err);
	if (code != FAMFS_OK && code != FAMFS_F_LOG_NEXT_INDEX && code != FAMFS_F_LOG_NEXT_SEQNUM) {
		add_finding(c, FAMFS_SEV_FATAL, code, -1, "%s", err.msg);
		return UINT64_MAX;
	}
	s->log_valid = true;
	s->log_total = slots;
	c->entries = (const void *)(h + 1);
	rep->old_next_index = h->next_index;
	rep->old_next_seqnum = h->next_seqnum;

	if (code == FAMFS_F_LOG_NEXT_INDEX) {
		/* Garbage counter: the written log is the run of intact slots. */
		add_finding(c, FAMFS_SEV_ERROR, code, -1, "%s", err.msg);
		for (end = 0; end < slots && entry_intact(&c->entries[end], end); end++)
			;
		if (start_integrity(c, end) < 0) {
			c->oom = true;
			return UINT64_MAX;
		}
		rep->needed = true;
		rep->new_next_index = end;
		s->log_used = end;
		c->tail_finding_at = SIZE_MAX;  /* the run of intact slots has no torn tail */
		return end;
	}
	end = h->next_index;
	if (start_integrity(c, end) < 0) {
		c->oom = true;
		return UINT64_MAX;
	}
	c->tail_finding_at = c->r->nfindings;
	if (code == FAMFS_F_LOG_NEXT_SEQNUM) {
		add_finding(c, FAMFS_SEV_ERROR, code, -1, "%s", err.msg);
		if (!rep->needed) {
			rep->needed = true;
			rep->new_next_index = end;
		}
	}
	s->log_used = end;
	return end;
}

/*
 * Once every entry's integrity is known: intact entries followed by ones
 * that are not mean a torn or invalid tail, which a repair cuts off.  Its
 * finding goes where the header's findings are, before the entries'.
 */
static void check_log_tail(struct checker *c, uint64_t end)
{
	struct famfs_check_report *r = c->r;
	uint64_t last_intact = 0;
	struct famfs_finding *f, moved;

	if (c->tail_finding_at == SIZE_MAX)
		return;
	for (uint64_t i = end; i > 0; i--) {
		if (c->integrity[i - 1] == FAMFS_OK) {
			last_intact = i;
			break;
		}
	}
	if (last_intact == end)
		return;
	r->repair.needed = true;
	r->repair.new_next_index = last_intact;
	f = add_finding(c, FAMFS_SEV_ERROR, FAMFS_F_LOG_NEXT_INDEX, (int64_t)last_intact,
			"log tail: entries %" PRIu64 " to %" PRIu64 " fail their integrity checks "
			"(torn or invalid tail after the last intact entry)", last_intact, end - 1);
	if (!f || c->tail_finding_at >= r->nfindings - 1)
		return;
	moved = *f;
	memmove(&r->findings[c->tail_finding_at + 1], &r->findings[c->tail_finding_at],
		(r->nfindings - 1 - c->tail_finding_at) * sizeof(*f));
	r->findings[c->tail_finding_at] = moved;
}

/* Counters stop at UINT64_MAX rather than wrap (only a hostile log gets there). */
static uint64_t add_saturating(uint64_t a, uint64_t b)
{
	uint64_t sum;

	return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

/* Room for @n spans (most files have one extent); growing is the fallback. */
static int reserve_spans(struct checker *c, size_t n)
{
	struct span *spans;

	if (n <= c->spans_cap)
		return 0;
	/* The prefault thread is done with an array that moves. */
	famfs_prefault_finish(c->prefault);
	c->prefault = NULL;
	spans = famfs_realloc_huge(c->spans, c->spans_cap * sizeof(*spans), n * sizeof(*spans));
	if (!spans)
		return -ENOMEM;
	c->spans = spans;
	c->spans_cap = n;
	return 0;
}

static void add_span(struct chunk_spans *cs, uint64_t offset, uint64_t len, uint64_t index)
{
	uint64_t units = len / AU + (len % AU != 0), end;

	/* Spans come from extents inside the device; the end is still never allowed to wrap. */
	if (__builtin_mul_overflow(units, AU, &end) || __builtin_add_overflow(offset, end, &end))
		end = UINT64_MAX / AU * AU;
	if (cs->n == cs->cap) {
		size_t cap = cs->cap ? cs->cap * 2 : 2 * CHUNK;
		struct span *spans = realloc(cs->spans, cap * sizeof(*spans));

		if (!spans) {
			cs->oom = true;
			return;
		}
		cs->spans = spans;
		cs->cap = cap;
	}
	cs->spans[cs->n++] = (struct span){
		.start = offset,
		.end = end,
		.index = index,
	};
}

static void add_file_spans(struct chunk_spans *cs, const struct famfs_log_file_meta *fm, uint64_t index)
{
	/* Read once and bounded: a shared log may change after its map was checked. */
	unsigned int n;

	if (fm->ext_type == FAMFS_EXT_SIMPLE) {
		n = fm->nextents < FAMFS_MAX_SIMPLE_EXTENTS ? fm->nextents : FAMFS_MAX_SIMPLE_EXTENTS;
		for (unsigned int i = 0; i < n; i++)
			add_span(cs, fm->se[i].offset, fm->se[i].len, index);
	} else {
		n = fm->ie[0].nstrips < FAMFS_MAX_STRIPS ? fm->ie[0].nstrips : FAMFS_MAX_STRIPS;
		for (unsigned int i = 0; i < n; i++)
			add_span(cs, fm->ie[0].strips[i].offset, fm->ie[0].strips[i].len, index);
	}
}

/*
 * The checks of an intact entry that need nothing but the entry itself, its
 * path's hash and its spans: on the thread that read the chunk.  Space an
 * intact entry describes stays claimed even if the file is refused.
 */
static void prepare_entry(struct checker *c, struct chunk_spans *cs, const struct famfs_log_entry *e,
			  uint64_t i, struct entry_prep *ep)
{
	bool extents_sound;

	ep->type = e->type;
	switch (ep->type) {
	case FAMFS_LOG_FILE:
		memcpy(ep->path, e->file.relpath, sizeof(ep->path));
		ep->code = famfs_file_meta_check(&e->file, ep->path, &c->layout, &extents_sound, NULL);
		if (extents_sound)
			add_file_spans(cs, &e->file, i);
		ep->size = e->file.size;
		ep->mode = e->file.mode;
		ep->uid = e->file.uid;
		ep->gid = e->file.gid;
		break;
	case FAMFS_LOG_MKDIR:
		memcpy(ep->path, e->mkdir.relpath, sizeof(ep->path));
		ep->code = famfs_path_check_field(ep->path, NULL);
		ep->size = 0;
		ep->mode = e->mkdir.mode;
		ep->uid = e->mkdir.uid;
		ep->gid = e->mkdir.gid;
		break;
	default:
		return;
	}
	if (ep->code == FAMFS_OK)
		famfs_ns_name_init(&ep->name, ep->path, strlen(ep->path));
}

static void prepare_chunk(void *arg, const struct famfs_log_entry *e, uint64_t first, uint64_t end)
{
	struct checker *c = arg;
	struct chunk_spans *cs = &c->chunk_spans[(first / CHUNK) % FAMFS_INTEGRITY_RING_CHUNKS];

	cs->n = 0;
	cs->oom = false;
	for (uint64_t i = first; i < end; i++)
		if (c->integrity[i] == FAMFS_OK)
			prepare_entry(c, cs, &e[i], i, &c->prep[i % RING_ENTRIES]);
}

/* At the first entry of a chunk: its spans join the rest, in entry order. */
static void take_chunk_spans(struct checker *c, uint64_t first)
{
	struct chunk_spans *cs = &c->chunk_spans[(first / CHUNK) % FAMFS_INTEGRITY_RING_CHUNKS];
	size_t want = c->nspans + cs->n;

	if (cs->oom || (want > c->spans_cap && reserve_spans(c, want > 2 * c->spans_cap ? want : 2 * c->spans_cap) < 0)) {
		c->oom = true;
		return;
	}
	if (cs->n)
		memcpy(c->spans + c->nspans, cs->spans, cs->n * sizeof(*cs->spans));
	c->nspans = want;
}

static void report_ns_error(struct checker *c, int r, uint64_t i, const char *path)
{
	struct famfs_finding *f;
	char parent[FAMFS_MAX_PATHLEN + 1];
	size_t plen = famfs_path_parent_len(path, strlen(path));
	uint32_t id;

	memcpy(parent, path, plen);
	parent[plen] = '\0';
	switch (r) {
	case -EEXIST:
		id = famfs_ns_lookup(c->ns, path, strlen(path));
		f = add_finding(c, FAMFS_SEV_ERROR, FAMFS_F_PATH_DUPLICATE, i,
				"log entry %" PRIu64 ": \"%s\" was already created by entry %" PRId64,
				i, path, famfs_ns_node(c->ns, id)->index);
		if (f)
			f->other_index = famfs_ns_node(c->ns, id)->index;
		break;
	case -ENOENT:
		f = add_finding(c, FAMFS_SEV_ERROR, FAMFS_F_PATH_NO_PARENT, i,
				"log entry %" PRIu64 ": parent directory \"%s\" of \"%s\" was not created by an earlier entry",
				i, parent, path);
		break;
	case -ENOTDIR:
		f = add_finding(c, FAMFS_SEV_ERROR, FAMFS_F_PATH_PARENT_NOT_DIR, i,
				"log entry %" PRIu64 ": parent \"%s\" of \"%s\" is a file", i, parent, path);
		break;
	default:
		c->oom = true;
		return;
	}
	if (f)
		set_path(f->path, path);
	c->r->summary.rejected_entries++;
}

static bool has_name(const struct checker *c, uint64_t i)
{
	const struct entry_prep *ep = &c->prep[i % RING_ENTRIES];

	return c->integrity[i] == FAMFS_OK && (ep->type == FAMFS_LOG_FILE || ep->type == FAMFS_LOG_MKDIR) &&
	       ep->code == FAMFS_OK;
}

/* An intact entry's namespace slot, read a little ahead: the add is a cache miss in a large table. */
static void prefetch_slot(struct checker *c, uint64_t i)
{
	if (has_name(c, i))
		famfs_ns_prefetch(c->ns, &c->prep[i % RING_ENTRIES].name);
}

static void fetch_prep(struct checker *c, uint64_t i)
{
	const struct entry_prep *ep = &c->prep[i % RING_ENTRIES];

	__builtin_prefetch(ep);
	__builtin_prefetch((const char *)ep + 64);
}

/* A FILE or MKDIR entry prepare_entry refused: the message comes from checking it again, on the same path copy. */
static void report_refused(struct checker *c, uint64_t i, const struct entry_prep *ep)
{
	const struct famfs_log_entry *e = famfs_integrity_entry(c->pass, i);
	struct famfs_err err = {0};
	struct famfs_finding *f;

	if (ep->type == FAMFS_LOG_FILE)
		(void)famfs_file_meta_check(&e->file, ep->path, &c->layout, NULL, &err);
	else
		(void)famfs_path_check_field(ep->path, &err);
	/* Only a map another host rewrote since prepare_entry checks clean now. */
	if (!err.msg[0])
		snprintf(err.msg, sizeof(err.msg), "the entry changed while it was being checked");
	f = add_finding(c, FAMFS_SEV_ERROR, ep->code, i, "log entry %" PRIu64 ": %s", i, err.msg);
	if (f)
		set_path(f->path, ep->path);
	c->r->summary.rejected_entries++;
}

static void check_entry(struct checker *c, uint64_t i)
{
	const struct entry_prep *ep = &c->prep[i % RING_ENTRIES];
	struct famfs_check_summary *s = &c->r->summary;
	const struct famfs_log_entry *e;
	enum famfs_finding_code code;
	struct famfs_err err = {0};
	int r;

	if (c->integrity[i] != FAMFS_OK) {
		e = famfs_integrity_entry(c->pass, i);
		code = famfs_log_entry_check_integrity(e, i, &err);
		s->bad_entries++;
		add_finding(c, FAMFS_SEV_ERROR, code, i, "%s", err.msg);
		return;
	}
	if (ep->type != FAMFS_LOG_FILE && ep->type != FAMFS_LOG_MKDIR) {
		e = famfs_integrity_entry(c->pass, i);
		code = famfs_log_entry_check_semantics(e, &c->layout, &err);
		if (code == FAMFS_F_DELETE_ENTRY)
			add_finding(c, FAMFS_SEV_WARNING, code, i, "log entry %" PRIu64 ": %s", i, err.msg);
		else if (code != FAMFS_OK) {
			add_finding(c, FAMFS_SEV_ERROR, code, i, "log entry %" PRIu64 ": %s", i, err.msg);
			s->rejected_entries++;
		}
		return;
	}
	if (ep->code != FAMFS_OK) {
		report_refused(c, i, ep);
		return;
	}
	r = famfs_ns_add_name(c->ns, &ep->name, ep->type == FAMFS_LOG_FILE ? FAMFS_NS_FILE : FAMFS_NS_DIR,
			      ep->mode, ep->uid, ep->gid, ep->size, i, NULL);
	if (r < 0) {
		report_ns_error(c, r, i, ep->path);
		return;
	}
	if (ep->type == FAMFS_LOG_FILE) {
		s->files++;
		s->file_bytes = add_saturating(s->file_bytes, ep->size);
	} else {
		s->directories++;
	}
}

/*
 * The fresh memory the walk fills, faulted in by another thread ahead of
 * it: clearing it was a fifth of a check of a full log.  Only when the
 * namespace will not grow past its reserve (which would move it).
 */
static void start_prefault(struct checker *c, uint64_t end)
{
	struct famfs_range ranges[FAMFS_NS_WORKING_RANGES + 1];
	size_t n;

	if (end < PREFAULT_MIN || end > FAMFS_NS_RESERVE_MAX)
		return;
	n = famfs_ns_working_memory(c->ns, ranges);
	ranges[n++] = (struct famfs_range){ c->spans, c->spans_cap * sizeof(*c->spans) };
	c->prefault = famfs_prefault_start(ranges, n);
}

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return 0;
}

/*
 * Sorts every extent by start and sweeps once, keeping the extent that
 * reaches furthest: any extent starting before that end overlaps it.  Each
 * overlapping extent is reported once, paired with the extent it overlaps
 * (so of three extents on one unit, two pairs are named, not three: every
 * cross-linked file appears).  The union of the extents gives the space in
 * use; the sum of their lengths minus the union counts the extra claims.
 */
static void check_crosslinks(struct checker *c, bool report_pairs)
{
	struct famfs_check_summary *s = &c->r->summary;
	uint64_t claimed = 0, used = 0, union_end = 0;
	const struct span *far = NULL;

	bool sorted = true;

	/* Logs written by a next-fit allocator are nearly always in order already. */
	for (size_t k = 1; k < c->nspans && sorted; k++)
		sorted = cmp_span(&c->spans[k - 1], &c->spans[k]) <= 0;
	if (!sorted)
		qsort(c->spans, c->nspans, sizeof(*c->spans), cmp_span);
	for (size_t k = 0; k < c->nspans; k++) {
		const struct span *x = &c->spans[k];

		claimed = add_saturating(claimed, (x->end - x->start) / AU);
		if (x->end > union_end) {
			used += (x->end - (x->start > union_end ? x->start : union_end)) / AU;
			union_end = x->end;
		}
		if (far && x->start < far->end && report_pairs) {
			uint64_t end = x->end < far->end ? x->end : far->end;
			const struct famfs_log_entry *a = &c->entries[far->index];
			const struct famfs_log_entry *b = &c->entries[x->index];
			struct famfs_finding *f;

			f = add_finding(c, FAMFS_SEV_ERROR, FAMFS_F_CROSSLINK, x->index,
					"cross-link: \"%.*s\" (entry %" PRIu64 ") and \"%.*s\" (entry %" PRIu64
					") share [0x%" PRIx64 ", 0x%" PRIx64 ")",
					FAMFS_MAX_PATHLEN, a->file.relpath, far->index,
					FAMFS_MAX_PATHLEN, b->file.relpath, x->index, x->start, end);
			if (f) {
				set_path(f->path, b->file.relpath);
				set_path(f->other_path, a->file.relpath);
				f->other_index = far->index;
				f->offset = x->start;
				f->length = end - x->start;
			}
		}
		if (!far || x->end > far->end)
			far = x;
	}
	s->crosslinked_units = claimed - used;
	s->allocated = add_saturating(famfs_data_start(c->layout.log_len), used * AU);
	s->free = (c->layout.dev_size / AU) * AU > s->allocated ?
		(c->layout.dev_size / AU) * AU - s->allocated : 0;
}

static int check(const uint8_t *base, uint64_t readable, uint64_t medium_size, int fd, unsigned flags,
		 struct famfs_check_report **ret);

int famfs_check_medium(const uint8_t *base, uint64_t medium_size, unsigned flags,
		       struct famfs_check_report **ret)
{
	return check(base, medium_size, medium_size, -1, flags, ret);
}

int famfs_check_view(const uint8_t *base, uint64_t readable, uint64_t medium_size, unsigned flags,
		     struct famfs_check_report **ret)
{
	return check(base, readable, medium_size, -1, flags, ret);
}

int famfs_check_device(const struct famfs_device *dev, unsigned flags, struct famfs_check_report **ret)
{
	/* Device DAX has no read(2); image files and pmem block devices do. */
	int fd = dev->kind == FAMFS_DEVICE_DAX ? -1 : dev->fd;

	if (!dev->base)
		return -EINVAL;
	return check(dev->base, dev->size, dev->size, fd, flags, ret);
}

static int check(const uint8_t *base, uint64_t readable, uint64_t medium_size, int fd, unsigned flags,
		 struct famfs_check_report **ret)
{
	const struct famfs_superblock *sb = NULL;
	struct checker c = { .base = base, .fd = fd, .readable = readable, .medium_size = medium_size };
	uint64_t end;
	int r = 0;

	/* A view holds at least the superblock region and a log header. */
	if (readable > medium_size ||
	    (readable < medium_size && readable < FAMFS_LOG_OFFSET + sizeof(struct famfs_log_header)))
		return -EINVAL;
	c.r = calloc(1, sizeof(*c.r));
	if (!c.r)
		return -ENOMEM;
	if (!check_superblock(&c, &sb))
		goto done;
	end = check_log_header(&c, sb);
	if (end == UINT64_MAX)
		goto done;
	r = famfs_ns_new(&c.ns);
	if (r < 0)
		goto done;
	/* Right-sized at once (each entry adds at most one node); growing is the fallback. */
	(void)famfs_ns_reserve(c.ns, end);
	(void)famfs_ns_reserve_names(c.ns, end < FAMFS_NS_RESERVE_MAX ? end * NAME_BYTES_GUESS :
				     FAMFS_NS_RESERVE_MAX * NAME_BYTES_GUESS);
	(void)reserve_spans(&c, end);
	start_prefault(&c, end);
	for (uint64_t i = 0; i < end && !c.oom; i++) {
		if (i % WAIT_EVERY == 0) {
			famfs_integrity_release(c.pass, i);
			famfs_integrity_wait(c.pass, end - i < WAIT_EVERY + FETCH_AHEAD ? end :
						     i + WAIT_EVERY + FETCH_AHEAD);
			if (i % CHUNK == 0)
				take_chunk_spans(&c, i);
		}
		if (i + FETCH_AHEAD < end)
			fetch_prep(&c, i + FETCH_AHEAD);
		if (i + PREFETCH_AHEAD < end)
			prefetch_slot(&c, i + PREFETCH_AHEAD);
		check_entry(&c, i);
	}
	famfs_integrity_finish(c.pass);
	c.pass = NULL;
	famfs_prefault_finish(c.prefault);
	c.prefault = NULL;
	if (!c.oom) {
		check_log_tail(&c, end);
		check_crosslinks(&c, !(flags & FAMFS_CHECK_NO_CROSSLINKS));
	}
	if (c.r->summary.log_used == c.r->summary.log_total)
		add_finding(&c, FAMFS_SEV_INFO, FAMFS_F_LOG_FULL, -1,
			    "the log is full (%" PRIu64 " of %" PRIu64 " entries): no more files can be created",
			    c.r->summary.log_used, c.r->summary.log_total);
done:
	famfs_integrity_finish(c.pass);
	famfs_prefault_finish(c.prefault);
	famfs_ns_free(c.ns);
	free(c.spans);
	for (size_t k = 0; k < FAMFS_INTEGRITY_RING_CHUNKS; k++)
		free(c.chunk_spans[k].spans);
	free(c.prep);
	free(c.integrity);
	if (r == 0 && c.oom)
		r = -ENOMEM;
	if (r < 0) {
		famfs_check_report_free(c.r);
		return r;
	}
	*ret = c.r;
	return 0;
}

struct famfs_check_report *famfs_check_report_free(struct famfs_check_report *r)
{
	if (r) {
		free(r->findings);
		free(r);
	}
	return NULL;
}

size_t famfs_check_report_errors(const struct famfs_check_report *r)
{
	return r->by_severity[FAMFS_SEV_ERROR] + r->by_severity[FAMFS_SEV_FATAL];
}

bool famfs_check_repair_fixes_all(const struct famfs_check_report *r)
{
	size_t fixable = r->per_code[FAMFS_F_LOG_NEXT_INDEX] + r->per_code[FAMFS_F_LOG_NEXT_SEQNUM];
	uint64_t tail = 0;

	if (!r->repair.needed)
		return false;
	/* Integrity failures in the tail being cut go away with it. */
	for (size_t k = 0; k < r->nfindings; k++) {
		const struct famfs_finding *f = &r->findings[k];

		if ((f->code == FAMFS_F_ENTRY_CRC || f->code == FAMFS_F_ENTRY_SEQNUM) &&
		    f->index >= (int64_t)r->repair.new_next_index)
			tail++;
	}
	if (r->suppressed)
		return false;
	return fixable + tail == famfs_check_report_errors(r);
}
