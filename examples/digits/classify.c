/*
 * Classifies the digits test set from C with the forward pass xlac compiled
 * ahead of time (digits.py writes the files and builds this program):
 *
 *   xlac compile predict.hlo -o digits.o --header digits.h --name digits
 *   cc -std=c99 -O2 -I. -I<xlac>/runtime classify.c digits.o <xlac>/runtime/xlac_runtime.c -lm -lpthread
 *   ./classify DIR     # DIR/weights.f32 (w1, b1, w2, b2), DIR/test_images.f32, DIR/test_labels.s32
 *
 * Prints one predicted class per line, then "accuracy A (K/N)".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digits.h"

static long read_file(const char *dir, const char *name, void *buf, long max_bytes) {
  char path[4096];
  FILE *f;
  long n;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "classify: cannot open %s\n", path);
    exit(1);
  }
  n = (long)fread(buf, 1, (size_t)max_bytes, f);
  fclose(f);
  return n;
}

int main(int argc, char **argv) {
  static float w1[DIGITS_PARAM0_ELEMENTS], b1[DIGITS_PARAM1_ELEMENTS];
  static float w2[DIGITS_PARAM2_ELEMENTS], b2[DIGITS_PARAM3_ELEMENTS];
  static float weights[DIGITS_PARAM0_ELEMENTS + DIGITS_PARAM1_ELEMENTS + DIGITS_PARAM2_ELEMENTS +
                       DIGITS_PARAM3_ELEMENTS];
  enum { MAX_IMAGES = 2048 };
  static float images[MAX_IMAGES * DIGITS_PARAM4_ELEMENTS];
  static int32_t labels[MAX_IMAGES];
  float logits[DIGITS_RESULT1_ELEMENTS];
  int32_t predicted;
  long n, k, correct = 0;
  float *p = weights;

  if (argc != 2) {
    fprintf(stderr, "usage: classify DIR\n");
    return 2;
  }
  if (read_file(argv[1], "weights.f32", weights, sizeof weights) != (long)sizeof weights) {
    fprintf(stderr, "classify: weights.f32 must hold %ld bytes\n", (long)sizeof weights);
    return 1;
  }
  memcpy(w1, p, sizeof w1), p += DIGITS_PARAM0_ELEMENTS;
  memcpy(b1, p, sizeof b1), p += DIGITS_PARAM1_ELEMENTS;
  memcpy(w2, p, sizeof w2), p += DIGITS_PARAM2_ELEMENTS;
  memcpy(b2, p, sizeof b2);
  n = read_file(argv[1], "test_images.f32", images, sizeof images) / (long)DIGITS_PARAM4_BYTES;
  if (read_file(argv[1], "test_labels.s32", labels, sizeof labels) != n * (long)sizeof(int32_t)) {
    fprintf(stderr, "classify: test_labels.s32 must hold one label per image (%ld)\n", n);
    return 1;
  }
  for (k = 0; k < n; ++k) {
    /* opts may be NULL: the forward pass needs no service (DIGITS_REQUIRED_SERVICES == 0). */
    int status = digits_run(w1, b1, w2, b2, images + k * DIGITS_PARAM4_ELEMENTS, &predicted, logits, NULL);
    if (status != XLAC_OK) {
      fprintf(stderr, "classify: digits_run failed: %s\n", xlac_status_string(status));
      return 1;
    }
    printf("%d\n", (int)predicted);
    correct += predicted == labels[k];
  }
  printf("accuracy %.4f (%ld/%ld)\n", n ? (double)correct / (double)n : 0.0, correct, n);
  return 0;
}
