/* The padded layout of one grid size, as static arrays: included by himeno.c once per size
 * with PAD(name) (a name with the size's suffix) and PAD_MI, PAD_MJ, PAD_MK (the grid plus one
 * padding plane per axis) defined.
 *
 * The fields are declared as RIKEN's static version declares them -- p, a[4], b[3], c[3],
 * bnd, wrk1, wrk2, each on the padded grid -- so that gcc lays them out in memory and reaches
 * them (at link-time addresses) as it does the reference's, and the sweep is the published
 * algorithm written over them with int indices and the extent of the grid known only at run
 * time (pad_imax, pad_jmax, pad_kmax, as the reference's static ints): gcc compiles it to
 * scalar code of the reference's length, so the two programs run at the same speed
 * (bench/kernels.py).  Static arrays are zero until first touched, and only what a run
 * touches is memory: a small size costs nothing of a large one's arrays -- but every run
 * needs their address space, so L's (1.9 GB) are built into a program of their own,
 * himeno-l (a 1 GB guest could not even start a program that declared them).
 */

#define PAD_N ((size_t)PAD_MI * PAD_MJ * PAD_MK)
static float PAD(p)[PAD_MI][PAD_MJ][PAD_MK];
static float PAD(a)[4][PAD_MI][PAD_MJ][PAD_MK], PAD(b)[3][PAD_MI][PAD_MJ][PAD_MK],
    PAD(c)[3][PAD_MI][PAD_MJ][PAD_MK];
static float PAD(bnd)[PAD_MI][PAD_MJ][PAD_MK];
static float PAD(wrk1)[PAD_MI][PAD_MJ][PAD_MK], PAD(wrk2)[PAD_MI][PAD_MJ][PAD_MK];

/* The benchmark's initial state on the imax x jmax x kmax grid; everything else (the padding
 * planes, and every field a run before this one changed) zero. */
static void PAD(init)(void)
{
    memset(PAD(p), 0, PAD_N * sizeof(float));
    memset(PAD(a), 0, 4 * PAD_N * sizeof(float));
    memset(PAD(b), 0, 3 * PAD_N * sizeof(float));
    memset(PAD(c), 0, 3 * PAD_N * sizeof(float));
    memset(PAD(bnd), 0, PAD_N * sizeof(float));
    memset(PAD(wrk1), 0, PAD_N * sizeof(float));
    memset(PAD(wrk2), 0, PAD_N * sizeof(float));
    const float a3 = (float)(1.0 / 6.0);
    const float denom = (float)((pad_imax - 1) * (pad_imax - 1));
    for (int i = 0; i < pad_imax; i++)
        for (int j = 0; j < pad_jmax; j++)
            for (int k = 0; k < pad_kmax; k++) {
                PAD(a)[0][i][j][k] = PAD(a)[1][i][j][k] = PAD(a)[2][i][j][k] = 1.0f;
                PAD(a)[3][i][j][k] = a3;
                PAD(c)[0][i][j][k] = PAD(c)[1][i][j][k] = PAD(c)[2][i][j][k] = 1.0f;
                PAD(bnd)[i][j][k] = 1.0f;
                PAD(p)[i][j][k] = (float)(i * i) / denom;
            }
}

/* The pressure at (i, j, k) (the --corrupt-point test hook). */
static float *PAD(pressure)(int i, int j, int k)
{
    return &PAD(p)[i][j][k];
}

/* nn Jacobi iterations; gosa of the last, summed point by point in i, j, k order. */
static float PAD(jacobi)(long nn)
{
    float gosa = 0.0f;
    for (long n = 0; n < nn; n++) {
        gosa = 0.0f;
        for (int i = 1; i < pad_imax - 1; i++)
            for (int j = 1; j < pad_jmax - 1; j++)
                for (int k = 1; k < pad_kmax - 1; k++) {
                    float s0 = PAD(a)[0][i][j][k] * PAD(p)[i + 1][j][k]
                             + PAD(a)[1][i][j][k] * PAD(p)[i][j + 1][k]
                             + PAD(a)[2][i][j][k] * PAD(p)[i][j][k + 1]
                             + PAD(b)[0][i][j][k] * (PAD(p)[i + 1][j + 1][k]
                                                     - PAD(p)[i + 1][j - 1][k]
                                                     - PAD(p)[i - 1][j + 1][k]
                                                     + PAD(p)[i - 1][j - 1][k])
                             + PAD(b)[1][i][j][k] * (PAD(p)[i][j + 1][k + 1]
                                                     - PAD(p)[i][j - 1][k + 1]
                                                     - PAD(p)[i][j + 1][k - 1]
                                                     + PAD(p)[i][j - 1][k - 1])
                             + PAD(b)[2][i][j][k] * (PAD(p)[i + 1][j][k + 1]
                                                     - PAD(p)[i - 1][j][k + 1]
                                                     - PAD(p)[i + 1][j][k - 1]
                                                     + PAD(p)[i - 1][j][k - 1])
                             + PAD(c)[0][i][j][k] * PAD(p)[i - 1][j][k]
                             + PAD(c)[1][i][j][k] * PAD(p)[i][j - 1][k]
                             + PAD(c)[2][i][j][k] * PAD(p)[i][j][k - 1]
                             + PAD(wrk1)[i][j][k];
                    float ss = (s0 * PAD(a)[3][i][j][k] - PAD(p)[i][j][k]) * PAD(bnd)[i][j][k];
                    gosa += ss * ss;
                    PAD(wrk2)[i][j][k] = PAD(p)[i][j][k] + pad_omega * ss;
                }
        for (int i = 1; i < pad_imax - 1; i++)
            for (int j = 1; j < pad_jmax - 1; j++)
                for (int k = 1; k < pad_kmax - 1; k++)
                    PAD(p)[i][j][k] = PAD(wrk2)[i][j][k];
    }
    return gosa;
}

#undef PAD_N
