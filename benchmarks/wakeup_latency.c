// How late a sleeping thread wakes on this machine: sleeps 1 ms over and over for N seconds and
// counts the wake-ups that came more than 1, 2 and 3 ms late. Run by wakeup_latency.sh beside
// busy loops of different priorities (issue 20: the tail of the HTTP overhead).
//   cc -O2 -o wakeup_latency wakeup_latency.c && ./wakeup_latency 20
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? atof(argv[1]) : 20;
  const struct timespec one_ms = {0, 1000000};
  long sleeps = 0, late1 = 0, late2 = 0, late3 = 0;
  double worst = 0;
  for (const double end = now() + seconds; now() < end; ++sleeps) {
    const double before = now();
    nanosleep(&one_ms, NULL);
    const double late_ms = (now() - before) * 1e3 - 1.0;
    late1 += late_ms > 1;
    late2 += late_ms > 2;
    late3 += late_ms > 3;
    if (late_ms > worst) worst = late_ms;
  }
  printf("%ld sleeps of 1 ms: woke > 1 ms late %ld, > 2 ms %ld, > 3 ms %ld; worst %.2f ms late\n", sleeps, late1,
         late2, late3, worst);
  return 0;
}
