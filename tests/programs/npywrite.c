/*
 * npywrite - test program: writes a .npy file.
 *   npywrite OUT DESCR SHAPE [-F] [-V MAJOR] [-Z BYTES] VALUE...
 * DESCR is a numpy descr such as '<f8', '>i4', '|b1', '<c16'; SHAPE is
 * comma-separated ("2,3"; "" for a 0-d array); -F writes Fortran order
 * (VALUES are then given in Fortran order); -V 2 or 3 writes that format
 * version. Complex values take two VALUEs each (real, imaginary). VALUEs
 * are parsed with strtod ("nan", "inf" allowed). -Z writes BYTES zero
 * bytes after the header, before any VALUE (a big array of zeros).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(FILE *f, uint64_t v, size_t size, int big)
{
	unsigned char b[8];

	for (size_t i = 0; i < size; i++)
		b[big ? size - 1 - i : i] = (unsigned char)(v >> (8 * i));
	fwrite(b, 1, size, f);
}

int main(int argc, char **argv)
{
	const char *out, *descr, *shape;
	int fortran = 0, major = 1, big, i = 4;
	unsigned long long zeros = 0;
	char kind, header[512], shp[128] = "";
	size_t size, hlen, pre, total;
	FILE *f;

	if (argc < 4) {
		fprintf(stderr, "usage: npywrite OUT DESCR SHAPE [-F] [-V MAJOR] [-Z BYTES] VALUE...\n");
		return 2;
	}
	out = argv[1];
	descr = argv[2];
	shape = argv[3];
	while (i < argc && argv[i][0] == '-' && (argv[i][1] == 'F' || argv[i][1] == 'V' || argv[i][1] == 'Z')) {
		if (argv[i][1] == 'F')
			fortran = 1;
		else if (argv[i][1] == 'V')
			major = atoi(argv[++i]);
		else
			zeros = strtoull(argv[++i], NULL, 10);
		i++;
	}
	big = descr[0] == '>';
	kind = descr[1];
	size = (size_t)atoi(descr + 2);
	if (!*shape)
		snprintf(shp, sizeof(shp), "()");
	else if (!strchr(shape, ','))
		snprintf(shp, sizeof(shp), "(%s,)", shape);
	else {
		snprintf(shp, sizeof(shp), "(");
		for (const char *p = shape; *p; p++) {
			size_t n = strlen(shp);

			if (*p == ',')
				snprintf(shp + n, sizeof(shp) - n, ", ");
			else
				snprintf(shp + n, sizeof(shp) - n, "%c", *p);
		}
		strcat(shp, ")");
	}
	snprintf(header, sizeof(header), "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr,
		 fortran ? "True" : "False", shp);
	pre = major == 1 ? 10 : 12;
	hlen = strlen(header) + 1;
	total = (pre + hlen + 63) / 64 * 64;
	while (strlen(header) + 1 < total - pre)
		strcat(header, " ");
	strcat(header, "\n");
	hlen = strlen(header);
	f = fopen(out, "wb");
	if (!f)
		return 2;
	fwrite("\x93NUMPY", 1, 6, f);
	fputc(major, f);
	fputc(0, f);
	put(f, hlen, major == 1 ? 2 : 4, 0);
	fwrite(header, 1, hlen, f);
	{
		static const unsigned char zero[65536];

		while (zeros > 0) {
			size_t n = zeros < sizeof(zero) ? (size_t)zeros : sizeof(zero);

			fwrite(zero, 1, n, f);
			zeros -= n;
		}
	}
	for (; i < argc; i++) {
		double d = strtod(argv[i], NULL);
		size_t part = kind == 'c' ? size / 2 : size;

		if (kind == 'f' || kind == 'c') {
			if (part == 4) {
				float x = (float)d;
				uint32_t u;

				memcpy(&u, &x, 4);
				put(f, u, 4, big);
			} else {
				uint64_t u;

				memcpy(&u, &d, 8);
				put(f, u, 8, big);
			}
		} else if (kind == 'u') {
			put(f, (uint64_t)strtoull(argv[i], NULL, 10), size, big);
		} else {
			put(f, (uint64_t)strtoll(argv[i], NULL, 10), size, big);
		}
	}
	return fclose(f) == 0 ? 0 : 2;
}
