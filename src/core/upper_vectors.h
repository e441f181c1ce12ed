/* upper_vectors.h - leave the vector registers clean after a library's
 * AVX-512 code. ISA-L's CRC, inflate and deflate return with the upper
 * halves of the vector registers dirty; the SSE code that runs next (ours
 * and SQLite's, compiled without AVX) then pays a transition on each such
 * return. Measured on this project's Xeon machines: a threads=1 TFRecord
 * scan of 1M records took 265 ms with the dirty state, 125 ms without. */
#ifndef DS_UPPER_VECTORS_H
#define DS_UPPER_VECTORS_H

/* vzeroupper when the CPU has AVX (asked at run time), else nothing. Call
 * it right after a call into ISA-L. */
void ds_clear_upper_vectors(void);

#endif
