// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * For builds without libFuzzer (gcc, the ordinary test run): runs a fuzz
 * target once on each file named, or on each file in each directory named,
 * so the committed corpus and crash reproducers are regression tests.
 * Prints TAP.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned ran;

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, k;

	if (!f) {
		printf("not ok %u - cannot open %s\n", ++ran, path);
		return 1;
	}
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		k = fread(buf + len, 1, cap - len, f);
		if (k == 0)
			break;
		len += k;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	printf("ok %u - %s\n", ++ran, path);
	fflush(stdout);
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir)
{
	struct dirent *d;
	char **names = NULL;
	size_t n = 0;
	int bad = 0;
	DIR *dh = opendir(dir);

	if (!dh) {
		printf("not ok %u - cannot open %s\n", ++ran, dir);
		return 1;
	}
	while ((d = readdir(dh))) {
		if (d->d_name[0] == '.')
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		if (!names || asprintf(&names[n], "%s/%s", dir, d->d_name) < 0)
			abort();
		n++;
	}
	closedir(dh);
	qsort(names, n, sizeof(*names), cmp_names);
	for (size_t k = 0; k < n; k++) {
		bad |= run_file(names[k]);
		free(names[k]);
	}
	free(names);
	return bad;
}

int main(int argc, char **argv)
{
	int bad = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
			bad |= run_dir(argv[i]);
		else
			bad |= run_file(argv[i]);
	}
	printf("1..%u\n", ran);
	return bad;
}
