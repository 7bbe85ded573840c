/*
 * fftw-mpi-bench: the FFT application kernel of mdxbench (Guidi et al. timed an FFTW MPI
 * FFT on 1..8 nodes and split its time into computation and communication).
 *
 * A 2-D complex forward FFT of N x N points, distributed by rows, done as FFTW MPI does
 * it internally, but with each phase timed on its own:
 *   1. local 1-D FFTs of the rows a rank holds            (computation)
 *   2. FFTW's MPI transpose of the whole matrix           (communication)
 *   3. local 1-D FFTs of the rows the rank holds now      (computation)
 * The result (transposed, as FFTW_MPI_TRANSPOSED_OUT) is compared once with FFTW's own
 * fftw_mpi_plan_dft_2d: a relative error above 1e-9 makes the program fail.
 *
 * Usage: fftw-mpi-bench N REPEATS
 * Output (rank 0): a header, a "pages" line, one "rep" line per repetition with the
 * slowest rank's phase times, then a "summary" line with the medians (key=value pairs,
 * times in seconds).
 *
 * Environment:
 *   MDXBENCH_THP=off   opt this process out of transparent huge pages (PR_SET_THP_DISABLE,
 *                      no privilege needed): Guidi et al. counted page faults of 4 KiB pages
 *   MDXBENCH_PERF_CTL_FD, MDXBENCH_PERF_ACK_FD
 *                      the file descriptors of `perf stat --control fd:CTL,ACK` (events
 *                      started disabled, -D -1): the counters are switched on for the
 *                      window MDXBENCH_PERF_WINDOW names
 *   MDXBENCH_PERF_WINDOW=timed (default)
 *                      the timed phases of each repetition only: not planning, filling,
 *                      the first touch of the data or the correctness check
 *   MDXBENCH_PERF_WINDOW=run
 *                      one run of the transform as Guidi et al. counted it (Table IV: its
 *                      page faults are the first touch of the N x N data): planned without
 *                      touching the data (FFTW_ESTIMATE), then counted from filling the
 *                      array (its first touch) to the end of the transform; REPEATS must be
 *                      1, and the correctness check (a second array) follows uncounted
 *   MDXBENCH_PERF_WINDOW=plan, MDXBENCH_FFTW_WISDOM=FILE
 *                      plan every transform of the one-run window with FFTW_MEASURE (its
 *                      measurements run transforms on this process's arrays), write FFTW's
 *                      wisdom to FILE and end: what the run window below plans from
 *   MDXBENCH_PERF_WINDOW=run, MDXBENCH_FFTW_WISDOM=FILE
 *                      the one-run window with the plan FFTW measured (Guidi et al.'s counts
 *                      come from FFTW's measured plan, not its estimate): FILE read and every
 *                      transform planned FFTW_MEASURE | FFTW_WISDOM_ONLY -- from the wisdom,
 *                      measuring nothing, so the data is still first touched in the window; a
 *                      transform FILE has no plan for fails, naming FILE
 * The "pages" line says how the transforms were planned: plan=measured, plan=estimate or
 * plan=measured-wisdom.
 */
#include <fftw3-mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static int perf_ctl = -1, perf_ack = -1;

/* Tell perf stat to switch its counters on or off, and wait for its acknowledgement. */
static void perf_counting(const char *command)
{
    char buf[16];
    if (perf_ctl < 0)
        return;
    if (write(perf_ctl, command, strlen(command)) < 0 || read(perf_ack, buf, sizeof buf) <= 0) {
        fprintf(stderr, "fftw-mpi-bench: perf control: no acknowledgement of %s", command);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* The system's transparent huge page mode: the bracketed word of the sysfs file. */
static void thp_system(char *out, size_t len)
{
    char buf[256];
    snprintf(out, len, "unknown");
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f)
        return;
    if (fgets(buf, sizeof buf, f)) {
        char *l = strchr(buf, '['), *r = l ? strchr(l, ']') : NULL;
        if (l && r) {
            *r = '\0';
            snprintf(out, len, "%s", l + 1);
        }
    }
    fclose(f);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Deterministic input: depends on the global index only, not on the rank count. */
static void fill(fftw_complex *a, ptrdiff_t rows, ptrdiff_t first, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < rows; i++)
        for (ptrdiff_t j = 0; j < n; j++) {
            double g = (double)((first + i) * n + j);
            a[i * n + j][0] = sin(0.001 * g) + 0.5 * cos(0.37 * g);
            a[i * n + j][1] = cos(0.002 * g) - 0.25 * sin(0.11 * g);
        }
}

/* One transform under perf's window, its phases timed: the array filled first (timed
 * window) or inside the window, its first touch counted (one-run window); the slowest
 * rank's computation, communication and total times into slowest[] on rank 0. */
static void counted_transform(fftw_plan rows_before, fftw_plan transpose, fftw_plan rows_after,
                              fftw_complex *a, ptrdiff_t rows, ptrdiff_t first, ptrdiff_t n,
                              int touch_counted, double slowest[3])
{
    if (!touch_counted)
        fill(a, rows, first, n);
    MPI_Barrier(MPI_COMM_WORLD);
    perf_counting("enable\n");
    if (touch_counted)
        fill(a, rows, first, n);
    double t0 = MPI_Wtime();
    fftw_execute(rows_before);
    double t1 = MPI_Wtime();
    fftw_execute(transpose);
    double t2 = MPI_Wtime();
    fftw_execute(rows_after);
    double t3 = MPI_Wtime();
    perf_counting("disable\n");
    double mine[3] = {(t1 - t0) + (t3 - t2), t2 - t1, t3 - t0};
    MPI_Reduce(mine, slowest, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
}

/* The end of a run: its plans and arrays freed, FFTW MPI and MPI finalized; 0. */
static int finish(fftw_plan *plans, int count, fftw_complex *a, fftw_complex *ref)
{
    for (int i = 0; i < count; i++)
        fftw_destroy_plan(plans[i]);
    fftw_free(a);
    fftw_free(ref);
    fftw_mpi_cleanup();
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    fftw_mpi_init();
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc != 3 || atol(argv[1]) < 2 || atoi(argv[2]) < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: %s N REPEATS (N >= 2, REPEATS >= 1)\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const ptrdiff_t n = atol(argv[1]);
    const int reps = atoi(argv[2]);
    const char *thp = getenv("MDXBENCH_THP");
    if (thp && strcmp(thp, "off") == 0 && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0) {
        fprintf(stderr, "fftw-mpi-bench: PR_SET_THP_DISABLE failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (getenv("MDXBENCH_PERF_CTL_FD") && getenv("MDXBENCH_PERF_ACK_FD")) {
        perf_ctl = atoi(getenv("MDXBENCH_PERF_CTL_FD"));
        perf_ack = atoi(getenv("MDXBENCH_PERF_ACK_FD"));
    }
    const char *window = getenv("MDXBENCH_PERF_WINDOW");
    const char *wisdom = getenv("MDXBENCH_FFTW_WISDOM");
    const int plan_only = window && strcmp(window, "plan") == 0;
    const int one_run = (window && strcmp(window, "run") == 0) || plan_only;
    if (window && !one_run && strcmp(window, "timed") != 0) {
        if (rank == 0)
            fprintf(stderr, "fftw-mpi-bench: MDXBENCH_PERF_WINDOW=%s: expected run, timed or "
                            "plan\n", window);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (plan_only && !(wisdom && *wisdom)) {
        if (rank == 0)
            fprintf(stderr, "fftw-mpi-bench: MDXBENCH_PERF_WINDOW=plan writes wisdom: "
                            "MDXBENCH_FFTW_WISDOM names no file\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int from_wisdom = one_run && !plan_only && wisdom && *wisdom;
    if (from_wisdom) {
        int read = 0;
        if (rank == 0)
            read = fftw_import_wisdom_from_filename(wisdom);
        MPI_Bcast(&read, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!read) {
            if (rank == 0)
                fprintf(stderr, "fftw-mpi-bench: cannot read FFTW wisdom from %s\n", wisdom);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        fftw_mpi_broadcast_wisdom(MPI_COMM_WORLD);
    }
    if (one_run && reps != 1) {
        if (rank == 0)
            fprintf(stderr, "fftw-mpi-bench: MDXBENCH_PERF_WINDOW=run counts one transform: "
                            "REPEATS must be 1, not %d\n", reps);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (n < 2 * nranks) {
        if (rank == 0)
            fprintf(stderr, "fftw-mpi-bench: N=%td leaves some of the %d ranks without 2 rows\n",
                    n, nranks);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    ptrdiff_t rows0, first0, rows1, first1;
    ptrdiff_t alloc = fftw_mpi_local_size_2d_transposed(n, n, MPI_COMM_WORLD,
                                                        &rows0, &first0, &rows1, &first1);
    fftw_complex *a = fftw_alloc_complex(alloc);
    int nn = (int)n;
    /* FFTW_MEASURE runs transforms on the arrays while planning (their first touch):
     * the one-run window plans without touching them -- from wisdom measured in an earlier
     * process, or by FFTW's estimate */
    const unsigned flags = plan_only ? FFTW_MEASURE
                           : from_wisdom ? FFTW_MEASURE | FFTW_WISDOM_ONLY
                           : one_run ? FFTW_ESTIMATE : FFTW_MEASURE;
    const char *planned = from_wisdom ? "measured-wisdom" : flags == FFTW_ESTIMATE ? "estimate"
                                                                                 : "measured";
    fftw_plan rows_before = fftw_plan_many_dft(1, &nn, (int)rows0, a, NULL, 1, nn, a, NULL, 1,
                                               nn, FFTW_FORWARD, flags);
    fftw_plan rows_after = fftw_plan_many_dft(1, &nn, (int)rows1, a, NULL, 1, nn, a, NULL, 1,
                                              nn, FFTW_FORWARD, flags);
    fftw_plan transpose = fftw_mpi_plan_many_transpose(n, n, 2, FFTW_MPI_DEFAULT_BLOCK,
                                                       FFTW_MPI_DEFAULT_BLOCK, (double *)a,
                                                       (double *)a, MPI_COMM_WORLD, flags);
    if (!rows_before || !rows_after || !transpose) {
        fprintf(stderr, "fftw-mpi-bench: FFTW could not plan N=%td on %d ranks%s%s\n", n,
                nranks, from_wisdom ? " from the wisdom of " : "", from_wisdom ? wisdom : "");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double counted[3] = {0.0, 0.0, 0.0};
    if (one_run && !plan_only)  /* the paper's window: the first touch of the data, one transform */
        counted_transform(rows_before, transpose, rows_after, a, rows0, first0, n, 1, counted);
    fftw_complex *ref = fftw_alloc_complex(alloc);
    fftw_plan whole = fftw_mpi_plan_dft_2d(n, n, ref, ref, MPI_COMM_WORLD, FFTW_FORWARD,
                                           flags | FFTW_MPI_TRANSPOSED_OUT);
    if (!whole) {
        fprintf(stderr, "fftw-mpi-bench: FFTW could not plan N=%td on %d ranks%s%s\n", n,
                nranks, from_wisdom ? " from the wisdom of " : "", from_wisdom ? wisdom : "");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (plan_only) {
        fftw_mpi_gather_wisdom(MPI_COMM_WORLD);
        int written = rank == 0 ? fftw_export_wisdom_to_filename(wisdom) : 1;
        MPI_Bcast(&written, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!written) {
            if (rank == 0)
                fprintf(stderr, "fftw-mpi-bench: cannot write FFTW wisdom to %s\n", wisdom);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (rank == 0)
            printf("fftw-mpi-bench plan n=%td ranks=%d wisdom=%s\n", n, nranks, wisdom);
        fftw_plan plans[] = {rows_before, rows_after, transpose, whole};
        return finish(plans, 4, a, ref);
    }

    /* Correctness, once: the three phases against FFTW's own distributed 2-D FFT (in the
     * one-run window, the counted transform's result). */
    if (!one_run) {
        fill(a, rows0, first0, n);
        fftw_execute(rows_before);
        fftw_execute(transpose);
        fftw_execute(rows_after);
    }
    fill(ref, rows0, first0, n);
    fftw_execute(whole);
    double err = 0.0, norm = 0.0, gerr, gnorm;
    for (ptrdiff_t k = 0; k < rows1 * n; k++) {
        err = fmax(err, hypot(a[k][0] - ref[k][0], a[k][1] - ref[k][1]));
        norm = fmax(norm, hypot(ref[k][0], ref[k][1]));
    }
    MPI_Reduce(&err, &gerr, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&norm, &gnorm, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    double rel = gnorm > 0 ? gerr / gnorm : gerr;
    MPI_Bcast(&rel, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        char mode[32];
        thp_system(mode, sizeof mode);
        printf("fftw-mpi-bench fftw=%s n=%td ranks=%d reps=%d check_rel_err=%.3e\n",
               fftw_version, n, nranks, reps, rel);
        printf("pages thp_system=%s thp_process=%s perf_counting=%s plan=%s\n", mode,
               prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1 ? "off" : "system",
               perf_ctl < 0 ? "none" : one_run ? "one-run" : "timed-phases", planned);
    }
    if (!(rel < 1e-9)) {
        if (rank == 0)
            fprintf(stderr, "fftw-mpi-bench: wrong result, relative error %.3e\n", rel);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    double *tcomp = malloc(reps * sizeof *tcomp), *tcomm = malloc(reps * sizeof *tcomm);
    double *ttot = malloc(reps * sizeof *ttot);
    for (int r = 0; one_run && rank == 0 && r < 1; r++) {
        tcomp[r] = counted[0];
        tcomm[r] = counted[1];
        ttot[r] = counted[2];
        printf("rep=%d compute_s=%.6e comm_s=%.6e total_s=%.6e\n", r + 1, counted[0],
               counted[1], counted[2]);
    }
    for (int r = 0; !one_run && r < reps; r++) {
        double slowest[3];
        counted_transform(rows_before, transpose, rows_after, a, rows0, first0, n, 0, slowest);
        if (rank == 0) {
            tcomp[r] = slowest[0];
            tcomm[r] = slowest[1];
            ttot[r] = slowest[2];
            printf("rep=%d compute_s=%.6e comm_s=%.6e total_s=%.6e\n", r + 1, slowest[0],
                   slowest[1], slowest[2]);
        }
    }
    if (rank == 0) {
        double mt = median(ttot, reps);
        double flops = 5.0 * (double)n * (double)n * log2((double)n * (double)n);
        printf("summary n=%td ranks=%d reps=%d median_compute_s=%.6e median_comm_s=%.6e "
               "median_total_s=%.6e gflops=%.4f\n", n, nranks, reps, median(tcomp, reps),
               median(tcomm, reps), mt, flops / mt / 1e9);
    }

    free(tcomp);
    free(tcomm);
    free(ttot);
    fftw_plan plans[] = {rows_before, rows_after, transpose, whole};
    return finish(plans, 4, a, ref);
}
