// SPDX-License-Identifier: GPL-2.0
/*
 * pingpong: two parties pass one byte back and forth over two pipes, on
 * one CPU (same: both on CPU 1) or two (cross: CPUs 1 and 0), as two
 * threads of one process or as two processes; prints the round trips per
 * second.  Under TCG, a switch between processes loads another page table
 * (CR3), which flushes the emulator's TLB; between threads it does not.
 *
 *   pingpong same|cross thread|process ROUNDS
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int ab[2], ba[2];
static long rounds;
static int other_cpu;

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		exit(1);
	}
}

static void *echo(void *arg)
{
	char c;
	long i;

	pin(other_cpu);
	for (i = 0; i < rounds; i++)
		if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
			exit(1);
	return arg;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	pthread_t t;
	pid_t pid = 0;
	double secs;
	char c = 'x';
	long i;

	if (argc != 4) {
		fprintf(stderr, "usage: %s same|cross thread|process ROUNDS\n", argv[0]);
		return 2;
	}
	other_cpu = strcmp(argv[1], "same") ? 0 : 1;
	rounds = atol(argv[3]);
	if (pipe(ab) || pipe(ba))
		return 1;
	pin(1);
	if (!strcmp(argv[2], "thread")) {
		if (pthread_create(&t, NULL, echo, NULL))
			return 1;
	} else {
		pid = fork();
		if (pid < 0)
			return 1;
		if (!pid) {
			echo(NULL);
			_exit(0);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < rounds; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (pid)
		waitpid(pid, NULL, 0);
	else
		pthread_join(t, NULL);
	secs = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("@pingpong %s %s %.0f\n", argv[1], argv[2], rounds / secs);
	return 0;
}
