/*
 * stream_triad.c: a small STREAM-style memory bandwidth test written for
 * devctl's accuracy comparison (scripts/bench-accuracy.sh). It runs STREAM's
 * copy, scale, add and triad over three arrays of doubles with OpenMP,
 * discards the first trial, and prints the best of the rest in decimal GB/s,
 * counting bytes as STREAM does (copy/scale 2 words, add/triad 3 words per
 * element). Build: gcc -O3 -fopenmp.
 *
 * Usage: stream_triad ARRAY_BYTES TRIALS [loop|nt]   (threads: OMP_NUM_THREADS)
 *   loop  the plain C loops as the compiler makes them (ordinary stores);
 *   nt    the same loops with streaming stores, as STREAM built for
 *         bandwidth (icc -qopt-streaming-stores) and the C library's large
 *         copies do, for arrays larger than the cache: 256-bit
 *         _mm256_stream_pd where the CPU has AVX (chosen at run time, so the
 *         build line stays gcc -O3 -fopenmp), else SSE2 _mm_stream_pd.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <immintrin.h>
#define HAVE_NT 1
#else
#define HAVE_NT 0
#endif

#if HAVE_NT
/* Streaming versions: two doubles per store; n is a multiple of 4, the
 * arrays are 4096-byte aligned, and the loops count whole vectors, so every
 * store is aligned whatever chunk OpenMP gives a thread. */
static void copy_nt(double *c, const double *a, long n) {
	long i;
#pragma omp parallel for schedule(static)
	for (i = 0; i < n / 2; i++)
		_mm_stream_pd(c + 2 * i, _mm_loadu_pd(a + 2 * i));
	_mm_sfence();
}
static void scale_nt(double *b, const double *c, double q, long n) {
	long i;
	__m128d vq = _mm_set1_pd(q);
#pragma omp parallel for schedule(static)
	for (i = 0; i < n / 2; i++)
		_mm_stream_pd(b + 2 * i, _mm_mul_pd(vq, _mm_loadu_pd(c + 2 * i)));
	_mm_sfence();
}
static void add_nt(double *c, const double *a, const double *b, long n) {
	long i;
#pragma omp parallel for schedule(static)
	for (i = 0; i < n / 2; i++)
		_mm_stream_pd(c + 2 * i, _mm_add_pd(_mm_loadu_pd(a + 2 * i), _mm_loadu_pd(b + 2 * i)));
	_mm_sfence();
}
static void triad_nt(double *a, const double *b, const double *c, double q, long n) {
	long i;
	__m128d vq = _mm_set1_pd(q);
#pragma omp parallel for schedule(static)
	for (i = 0; i < n / 2; i++)
		_mm_stream_pd(a + 2 * i, _mm_add_pd(_mm_loadu_pd(b + 2 * i), _mm_mul_pd(vq, _mm_loadu_pd(c + 2 * i))));
	_mm_sfence();
}

/* The same four with 256-bit streaming stores, compiled for AVX whatever
 * the build's -march; main uses them only where the CPU has AVX. */
#define AVX __attribute__((target("avx")))
AVX static void copy_nt256(double *c, const double *a, long n) {
	long i;
#pragma omp parallel for schedule(static)
	for (i = 0; i < n / 4; i++)
		_mm256_stream_pd(c + 4 * i, _mm256_loadu_pd(a + 4 * i));
	_mm_sfence();
}
AVX static void scale_nt256(double *b, const double *c, double q, long n) {
	long i;
	__m256d vq = _mm256_set1_pd(q);
#pragma omp parallel for schedule(static)
	for (i = 0; i < n / 4; i++)
		_mm256_stream_pd(b + 4 * i, _mm256_mul_pd(vq, _mm256_loadu_pd(c + 4 * i)));
	_mm_sfence();
}
AVX static void add_nt256(double *c, const double *a, const double *b, long n) {
	long i;
#pragma omp parallel for schedule(static)
	for (i = 0; i < n / 4; i++)
		_mm256_stream_pd(c + 4 * i, _mm256_add_pd(_mm256_loadu_pd(a + 4 * i), _mm256_loadu_pd(b + 4 * i)));
	_mm_sfence();
}
AVX static void triad_nt256(double *a, const double *b, const double *c, double q, long n) {
	long i;
	__m256d vq = _mm256_set1_pd(q);
#pragma omp parallel for schedule(static)
	for (i = 0; i < n / 4; i++)
		_mm256_stream_pd(a + 4 * i, _mm256_add_pd(_mm256_loadu_pd(b + 4 * i), _mm256_mul_pd(vq, _mm256_loadu_pd(c + 4 * i))));
	_mm_sfence();
}
#endif

int main(int argc, char **argv) {
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s ARRAY_BYTES TRIALS [loop|nt]\n", argv[0]);
		return 2;
	}
	int nt = argc == 4 && strcmp(argv[3], "nt") == 0;
	if (argc == 4 && !nt && strcmp(argv[3], "loop") != 0) {
		fprintf(stderr, "store kind %s: want loop or nt\n", argv[3]);
		return 2;
	}
	if (nt && !HAVE_NT) {
		fprintf(stderr, "nt: no SSE2 streaming stores on this architecture\n");
		return 2;
	}
	long n = (atol(argv[1]) / (long)sizeof(double)) & ~3L;
	int trials = atoi(argv[2]);
	if (n < 1024 || trials < 2) {
		fprintf(stderr, "want ARRAY_BYTES >= 8192 and TRIALS >= 2\n");
		return 2;
	}
	double *a = aligned_alloc(4096, n * sizeof(double) + 4096);
	double *b = aligned_alloc(4096, n * sizeof(double) + 4096);
	double *c = aligned_alloc(4096, n * sizeof(double) + 4096);
	if (!a || !b || !c) {
		perror("aligned_alloc");
		return 1;
	}
	const double q = 3.0;
	long i;
#pragma omp parallel for schedule(static)
	for (i = 0; i < n; i++) {
		a[i] = 1.0;
		b[i] = 2.0;
		c[i] = 0.0;
	}
#pragma omp parallel for schedule(static)
	for (i = 0; i < n; i++)
		a[i] = 2.0 * a[i];

	double best[4] = {1e30, 1e30, 1e30, 1e30};
	for (int k = 0; k <= trials; k++) {
		double t[4];
#if HAVE_NT
		if (nt) {
			int wide = __builtin_cpu_supports("avx");
			t[0] = omp_get_wtime();
			wide ? copy_nt256(c, a, n) : copy_nt(c, a, n);
			t[0] = omp_get_wtime() - t[0];
			t[1] = omp_get_wtime();
			wide ? scale_nt256(b, c, q, n) : scale_nt(b, c, q, n);
			t[1] = omp_get_wtime() - t[1];
			t[2] = omp_get_wtime();
			wide ? add_nt256(c, a, b, n) : add_nt(c, a, b, n);
			t[2] = omp_get_wtime() - t[2];
			t[3] = omp_get_wtime();
			wide ? triad_nt256(a, b, c, q, n) : triad_nt(a, b, c, q, n);
			t[3] = omp_get_wtime() - t[3];
			goto timed;
		}
#endif
		t[0] = omp_get_wtime();
#pragma omp parallel for schedule(static)
		for (i = 0; i < n; i++)
			c[i] = a[i];
		t[0] = omp_get_wtime() - t[0];
		t[1] = omp_get_wtime();
#pragma omp parallel for schedule(static)
		for (i = 0; i < n; i++)
			b[i] = q * c[i];
		t[1] = omp_get_wtime() - t[1];
		t[2] = omp_get_wtime();
#pragma omp parallel for schedule(static)
		for (i = 0; i < n; i++)
			c[i] = a[i] + b[i];
		t[2] = omp_get_wtime() - t[2];
		t[3] = omp_get_wtime();
#pragma omp parallel for schedule(static)
		for (i = 0; i < n; i++)
			a[i] = b[i] + q * c[i];
		t[3] = omp_get_wtime() - t[3];
#if HAVE_NT
	timed:
#endif
		if (k == 0)
			continue; /* STREAM discards the first trial */
		for (int j = 0; j < 4; j++)
			if (t[j] < best[j])
				best[j] = t[j];
	}
	/* check a sample against the scalar replay, as STREAM does */
	double ea = 2.0, eb = 2.0, ec = 0.0;
	for (int k = 0; k <= trials; k++) {
		ec = ea;
		eb = q * ec;
		ec = ea + eb;
		ea = eb + q * ec;
	}
	for (i = 0; i < n; i += n / 97 + 1) {
		if (a[i] != ea || b[i] != eb || c[i] != ec) {
			fprintf(stderr, "validation failed at %ld\n", i);
			return 1;
		}
	}
	const char *names[4] = {"copy", "scale", "add", "triad"};
	const int words[4] = {2, 2, 3, 3};
	for (int j = 0; j < 4; j++)
		printf("%s %.2f\n", names[j], words[j] * sizeof(double) * (double)n / best[j] / 1e9);
	printf("threads %d\n", omp_get_max_threads());
	return 0;
}
