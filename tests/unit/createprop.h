/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The create property of issue 11 §2, for the unit test and for a fuzz
 * target: after any create request, either the call succeeded and the
 * medium checks clean (famfs_check_medium), or it failed and the superblock
 * region and the log are byte for byte what they were.
 *
 * Requests are decoded from bytes (past the end every byte reads as 0), so a
 * fuzzer can drive them directly and a test can feed seeded random bytes.
 * A request is a batch of creates (sizes at the edges of 2^64, of the free
 * space and of the interleave geometry; random interleave parameters;
 * fresh, existing, repeated, malformed and random names) or a mkdir that
 * gives later requests parents to create under.  Plain C on libfamfs: no
 * GLib, so a libFuzzer build can link it as it is.
 */
#ifndef FAMFS_CREATEPROP_H
#define FAMFS_CREATEPROP_H

#include <stddef.h>
#include <stdint.h>

/* A sparse image this big: room for up to 16 interleave buckets of 1 GiB. */
#define CREATEPROP_DEV_SIZE (UINT64_C(16) << 30)

struct createprop_stats {
	uint64_t requests;
	uint64_t succeeded;
	uint64_t failed;
	uint64_t files_created;
	uint64_t batch_failures;          /* failed batches of more than one file */
	uint64_t by_errno[160];           /* failures by -r (FAMFS_ELOGFULL included) */
};

struct createprop;

/*
 * Creates (or truncates) the image at @image_path, formats it and attaches
 * it as master.  0, or -errno with a message in @why.
 */
int createprop_new(const char *image_path, struct createprop **ret, char *why, size_t why_len);
void createprop_free(struct createprop *cp);

/*
 * Formats the image afresh and runs the requests decoded from @data, one
 * after the other until it is used up, checking the property after each.
 * 0 when it held throughout; -1 with what broke it in @why.
 */
int createprop_run(struct createprop *cp, const uint8_t *data, size_t len, char *why, size_t why_len);

const struct createprop_stats *createprop_stats(const struct createprop *cp);

#endif
