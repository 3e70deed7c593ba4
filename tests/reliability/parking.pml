/*
 * parking.pml - Promela model of the runtime's M parking/unparking protocol.
 *
 * What is modelled: Go's src/runtime/proc.go, "Worker thread parking/unparking"
 * and findRunnable's "delicate dance", which DESIGN.md ("The runtime") makes
 * the contract of runtime/proc.c.
 *   - PROCS Ps. A P's local run queue (ring + runnext) is a counter, runq[];
 *     only the owner puts, the owner and thieves take, each take one atomic
 *     step (the ring's CAS on head).
 *   - The global run queue (glob), the idle-P list (pidle[], npidle) and the
 *     idle-M list (midle[], mstarted[]) under sched.lock; the atomics
 *     nmspinning and needspinning; each M's one-shot park note.
 *   - THREADS Ms running schedule() -> findRunnable(): the local queue, the global
 *     queue; steal only while spinning, and become spinning only if
 *     2*nmspinning < gomaxprocs - npidle; then, under sched.lock, the global
 *     queue again, needspinning (set and not spinning: become spinning and
 *     start over), release the P (pidleput); then, if the M was spinning, drop
 *     nmspinning FIRST and re-check the global queue and every local queue,
 *     taking an idle P and spinning again when work is found
 *     (pidlegetSpinning: no idle P sets needspinning); else stopm: mput under
 *     sched.lock and sleep on the note.
 *   - wakep: return if nmspinning != 0; CAS nmspinning 0 -> 1; under
 *     sched.lock take an idle P or, if none, set needspinning, undo the
 *     increment and return; startm: under sched.lock take an idle M or start
 *     a new thread (newm), hand it the P with spinning = true, wake its note.
 *     A spinning M that finds work stops spinning and calls wakep
 *     (resetspinning).
 *   - Gs. The G running on an M may, from a budget of WORK operations shared
 *     by all Gs, spawn (wsr_go: runqput on its P, then wakep) any number of
 *     times; then it exits (schedule again), yields (wsr_yield, Go's
 *     goschedImpl: globrunqput under sched.lock, wakep, schedule) or runs
 *     forever without a yield point ("hog": it keeps its M and P). At most
 *     HOGS = PROCS - 1 Gs hog, so some P is always free for the remaining work:
 *     every runnable G can run, and only a lost wakeup can strand one.
 *   - M0 boots holding P0 and runs the main G; Ps 1.. are idle; the other Ms
 *     do not exist yet and are started by newm on demand. THREADS bounds the
 *     threads (Go has no bound); the assertion in startm proves the bound is
 *     never reached, so the model loses no behaviour to it.
 *
 * Memory model: statements interleave, i.e. sequential consistency. That is
 * what the runtime must provide at the two Dekker-style pairs (runqput, then
 * load nmspinning; decrement nmspinning, then load the run queues): seq_cst
 * atomic operations there, a full StoreLoad barrier.
 *
 * Left out, and why:
 *   runnext is part of the local queue; the ring never overflows (WORK is
 *   far below 256), so runqputslow is left out (yield covers the global
 *   queue); one steal round over the other Ps in a fixed order (Go's random
 *   order is one of them; the re-check after dropping spinning, not the
 *   steal, is what must catch late work); findRunnable's unlocked peek at
 *   the global queue is folded into the locked check; timers, netpoll, GC,
 *   syscalls, sysmon and preemption are not modelled.
 *
 * Reduction: a critical section whose only accesses to data not protected by
 * sched.lock are at most one lock-free shared access is executed as one step,
 * `atomic { schedlock == 0 -> ... }` (Lipton: acquire is a right mover,
 * release a left mover, accesses to lock-protected data move both ways).
 * glob, pidle[], midle[] and mstarted[] are only touched under the lock;
 * npidle is written under it and read without it; needspinning, nmspinning,
 * runq[] and note[] are lock-free. Sections with more than one lock-free
 * access (the release of the P, the global re-check, wakep's pidleget) keep
 * every step, with the lock modelled by schedlock.
 *
 * Properties:
 *   - No lost wakeup. `quiescence` runs only once nothing else can move
 *     (timeout), i.e. every M is asleep on its note or running a hog, and
 *     asserts that no G is left on any queue (stranded == 0), that every G
 *     made runnable has run, and that no M sleeps counted in nmspinning.
 *     Checked exhaustively in a safety run, which also reports invalid end
 *     states (an M blocked anywhere but on its note or in a hog: e.g. on
 *     sched.lock).
 *   - Every runnable G is eventually run. The only progress label is on
 *     running a G and the work is bounded, so when the non-progress-cycle
 *     search (pan.c built with -DNP, ./pan -l) finds no cycle, every
 *     execution ends in a quiescent state, where the assertions above hold.
 *     (pan's -DNP is its own switch; the model's sizes are named PROCS etc.
 *     so as not to collide with it.)
 *   - Along the way: nothing parks holding a P, the spinning flag or the
 *     lock; nmspinning never goes below 0 (proc.go's throws).
 *
 * -DWSR_RUNTIME: the two places where runtime/proc.c departs from proc.go.
 * trybecomespinning raises nmspinning by a CAS loop that re-reads npidle, so
 * the cap 2*nmspinning < gomaxprocs - npidle is never overshot (Go: load,
 * test, add). rejoinspinning, used on needspinning and after the delicate
 * dance found work, refuses while nmspinning >= (gomaxprocs+1)/2 > 0: the M
 * then goes on without spinning (on needspinning: it releases its P and
 * parks without a re-check), counting on the spinner that is there. spin
 * checks this variant as exhaustively as Go's.
 *
 * -DBROKEN: the spinning M re-checks the queues BEFORE dropping nmspinning,
 * the order proc.go's "delicate dance" comment forbids. A G spawned between
 * the re-check and the decrement sees nmspinning != 0 and skips wakep; if
 * the spawning G then hogs its P, the child waits forever while a P is idle
 * and every other M sleeps. spin must report "assertion violated
 * (stranded==0)".
 *
 * -DBROKEN_NEEDSPINNING: pidlegetSpinning no longer sets needspinning (the
 * protocol before the fix DESIGN.md mentions). spin's shortest trail: M0's
 * G spawns a child and calls wakep, whose CAS makes nmspinning 1 before it
 * finds no idle P and undoes it; M1, choosing whether to spin, reads that
 * transient 1 (2*1 < 2 - 0 fails), so it releases its P and parks without a
 * re-check; M0's G hogs: the child is stranded next to an idle P. Same
 * assertion. (proc.go: "the runtime has some cases of transient increments
 * of nmspinning that are decremented without further recheck".)
 *
 * -DTSO_TAIL: runqput publishes the tail with a plain store on x86-64 (what
 * a C11 memory_order_release store compiles to): the store waits in the M's
 * store buffer (sbuf[], drained by a process of its own at any time, and
 * before the M's next locked instruction), so wakep's load of nmspinning can
 * overtake it. spin finds the Dekker failure: the submitter reads
 * nmspinning = 1 while the spinner decrements it and re-checks a queue that
 * does not show the G yet. Hence runqput's tail store must be seq_cst (an
 * XCHG on x86-64), or wakep's first look at nmspinning a seq_cst
 * read-modify-write. (Only the spawn path's store is buffered here, and
 * the M's own next look at its queue waits for the drain instead of TSO's
 * store forwarding: both only remove executions, so the failure spin finds
 * is a real x86-TSO execution.)
 *
 * Run:   spin -a [-DBROKEN] parking.pml && cc -O2 -DSAFETY -o pan pan.c && ./pan
 * Sizes: spin -DPROCS=2 -DTHREADS=5 -DWORK=2 -DHOGS=1 (the defaults). THREADS
 * must exceed the most Ms alive at once (5 for WORK=2: 4 fails the assertion
 * in startm). tests/reliability/spin-parking.sh runs what CI checks;
 * tests/README.md has the state counts.
 */

#ifndef PROCS
#define PROCS 2
#endif
#ifndef THREADS
#define THREADS 5
#endif
#ifndef WORK
#define WORK 2
#endif
#ifndef HOGS
#define HOGS (PROCS - 1)
#endif
#define NONE 255
#ifndef BROKEN_NEEDSPINNING
# define NEEDSPINNING needspinning = 1
#else
# define NEEDSPINNING skip /* the protocol without needspinning */
#endif

byte runq[PROCS];       /* local run queue length; owner puts, owner and thieves take */
byte glob;              /* global run queue length; under sched.lock */
bool pidle[PROCS];      /* P is on the idle list; under sched.lock */
byte npidle;            /* written under sched.lock, read atomically */
bool midle[THREADS];    /* M is on the idle list (mput/mget); under sched.lock */
bool mstarted[THREADS]; /* the M's thread exists (newm); under sched.lock */
byte nmspinning;        /* atomic */
bit needspinning;       /* atomic */
byte schedlock;         /* sched.lock: 0 free, else the holder's M id + 1 */
byte note[THREADS];     /* m.park with the hand-over folded in: 0 = not woken,
			 * else startm's m.nextp + 1 (startm always passes
			 * spinning = true). startm stores m.nextp and m.spinning
			 * before notewakeup and the M reads them only after
			 * notesleep returns, so the three form one step. */
byte budget = WORK;     /* model bookkeeping: spawns and yields left */
byte readied;           /* model bookkeeping: Gs made runnable (spawned or yielded) */
byte ran;               /* model bookkeeping: Gs taken off a queue to run */
byte nhog;              /* model bookkeeping: Gs that never yield */

#ifdef TSO_TAIL
byte sbuf[THREADS];  /* x86-TSO: tail increments in M's store buffer, not yet visible */
byte sbufp[THREADS]; /* the P they are for */

/* The store buffer drains on its own, whenever it likes. */
proctype drain(byte m)
{
end:	do
	:: atomic {
			sbuf[m] > 0 ->
			runq[sbufp[m]] = runq[sbufp[m]] + sbuf[m];
			sbuf[m] = 0;
			sbufp[m] = 0
		}
	od
}
/* The M's own stores are visible: before a locked instruction, and (more
 * strictly than TSO, which forwards them) before it looks at its queue. */
# define DRAINED (sbuf[me] == 0)
#else
# define DRAINED true
#endif

inline sched_lock()
{
	atomic { schedlock == 0 -> schedlock = me + 1 }
}

inline sched_unlock()
{
	assert(schedlock == me + 1);
	schedlock = 0
}

/* becomeSpinning: m.spinning = true; nmspinning++; needspinning = 0. */
inline become_spinning()
{
	d_step {
		spinning = 1;
		nmspinning++
	}
	needspinning = 0
}

#ifdef WSR_RUNTIME
/* runtime/proc.c trybecomespinning: a CAS loop, so the cap is never exceeded;
 * npidle is re-read on every round. */
inline try_become_spinning()
{
	k = nmspinning;
	do
	:: d_step { 2 * k >= PROCS - npidle -> k = 0 }; break /* refused */
	:: else ->
		if
		:: atomic { nmspinning == k -> nmspinning = k + 1; spinning = 1; k = 0 };
			needspinning = 0;
			break
		:: atomic { nmspinning != k -> k = nmspinning } /* the CAS failed */
		fi
	od
}

/* runtime/proc.c rejoinspinning: after the delicate dance found work, or on
 * needspinning; refused only while someone spins and the cap is reached. */
inline rejoin_spinning()
{
	k = nmspinning;
	do
	:: d_step { (k >= (PROCS + 1) / 2 && k > 0) -> k = 0 }; break /* refused */
	:: else ->
		if
		:: atomic { nmspinning == k -> nmspinning = k + 1; spinning = 1; k = 0 };
			needspinning = 0;
			break
		:: atomic { nmspinning != k -> k = nmspinning } /* the CAS failed */
		fi
	od
}
#endif

/* Stop spinning; below zero is proc.go's "negative nmspinning" throw. */
inline drop_spinning()
{
	d_step {
		spinning = 0;
		assert(nmspinning > 0);
		nmspinning--
	}
}

/* pidlegetSpinning: pop an idle P into res; with none, set needspinning so
 * that a non-spinning M about to drop its P spins instead.
 * Caller holds sched.lock. One step: it touches npidle or needspinning. */
inline pidleget_spinning(res)
{
	d_step {
		res = 0;
		do
		:: res == PROCS -> res = NONE; NEEDSPINNING; break
		:: res < PROCS && pidle[res] -> pidle[res] = 0; npidle--; break
		:: res < PROCS && !pidle[res] -> res++
		od
	}
}

/* globrunqget: take min(glob, glob/PROCS + 1) Gs, one to run and the rest onto
 * pp's queue. Caller holds sched.lock and owns pp. */
inline globrunqget(pp)
{
	assert(glob > 0);
	k = glob / PROCS + 1;
	if
	:: k > glob -> k = glob
	:: else
	fi;
	glob = glob - k;
	runq[pp] = runq[pp] + k - 1;
	ran++;
	k = 0
}

/* startm(pp, spinning = true): hand pp to an idle M, or to a new thread. */
inline startm(pp)
{
	atomic {
		schedlock == 0 -> /* sched.lock held for the whole step */
		/* mget */
		k = 0;
		do
		:: k == THREADS -> break
		:: k < THREADS && midle[k] -> midle[k] = 0; break
		:: k < THREADS && !midle[k] -> k++
		od;
		if
		:: k == THREADS ->
			/* newm */
			k = 0;
			do
			:: k == THREADS -> break
			:: k < THREADS && !mstarted[k] -> mstarted[k] = 1; break
			:: k < THREADS && mstarted[k] -> k++
			od;
			assert(k < THREADS) /* the model's thread bound: raise THREADS */
		:: else
		fi
	}
	d_step {
		/* m.nextp = pp; m.spinning = true; notewakeup(&m.park) */
		note[k] = pp + 1;
		k = 0
	}
}

/* wakep: start a spinning M if none spins and a P is idle. */
inline wakep()
{
	if
	:: nmspinning != 0 -> skip
	:: else ->
#ifdef TSO_TAIL
		sbuf[me] == 0; /* the CAS, a locked instruction, drains the store buffer */
#endif
		if
		:: atomic { nmspinning == 0 -> nmspinning = 1 }; /* CAS(0, 1) */
			atomic {
				schedlock == 0 -> schedlock = me + 1;
				pidleget_spinning(q)
			}
			if
			:: q == NONE ->
				/* needspinning is set: undo the increment */
				assert(nmspinning > 0);
				nmspinning--;
				sched_unlock()
			:: else ->
				sched_unlock();
				startm(q);
				q = 0
			fi
		:: else /* the CAS failed: someone else spins */
		fi
	fi
}

proctype M(byte me)
{
	byte p = NONE; /* m.p */
	byte i;        /* P index in the scans */
	byte k;        /* scratch: batch size, M index */
	byte q;        /* scratch: the P wakep hands on */
	bit spinning;  /* m.spinning */

	if
	:: me == 0 -> p = 0; goto execute /* M0 boots with P0 and runs the main G */
	:: else -> goto end_park          /* not started: newm wakes it with a P */
	fi;

top:	/* schedule -> findRunnable; p != NONE (pan checks every index) */
	/* Local run queue: runqget. */
	if
	:: atomic { runq[p] > 0 -> runq[p]--; ran++ };
		goto found
	:: else
	fi;
	/* Global run queue; the whole section in one step. */
	atomic {
		schedlock == 0 ->
		if
		:: glob > 0 -> globrunqget(p); goto found
		:: else
		fi
	}
	/* Spin and steal, if fewer than half of the busy Ps have a spinner. */
#ifndef WSR_RUNTIME
	k = nmspinning;
	if
	:: d_step { (spinning || 2 * k < PROCS - npidle) -> k = 0; i = (p + 1) % PROCS };
		if
		:: !spinning -> become_spinning()
		:: else
		fi;
#else
	if
	:: !spinning -> try_become_spinning()
	:: else
	fi;
	if
	:: d_step { spinning -> i = (p + 1) % PROCS };
#endif
		do
		:: i == p -> break
		:: else ->
			if
			:: atomic {
					/* runqsteal: half of the victim's queue, rounded up, one CAS */
					runq[i] > 0 ->
					k = (runq[i] + 1) / 2;
					runq[i] = runq[i] - k;
					runq[p] = runq[p] + k - 1;
					ran++;
					k = 0;
					i = 0
				};
				goto found
			:: else -> i = (i + 1) % PROCS
			fi
		od;
		i = 0
#ifndef WSR_RUNTIME
	:: d_step { else -> k = 0 }
#else
	:: else
#endif
	fi;

	/* Nothing found: under sched.lock, the global queue, needspinning, releasep. */
	atomic {
		schedlock == 0 -> schedlock = me + 1;
		if
		:: glob > 0 -> globrunqget(p); schedlock = 0; goto found
		:: else
		fi
	}
	if
	:: !spinning && needspinning ->
		/* a spinner found work but no idle P: spin on its behalf */
#ifndef WSR_RUNTIME
		become_spinning();
		sched_unlock();
		goto top
#else
		rejoin_spinning();
		if
		:: spinning -> sched_unlock(); goto top
		:: else /* refused: someone spins, and will re-check */
		fi
#endif
	:: else
	fi;
	d_step {
		/* releasep; pidleput */
		pidle[p] = 1;
		npidle++;
		p = NONE
	}
	sched_unlock();

	if
	:: spinning ->
#ifndef BROKEN
		/* The delicate dance: drop nmspinning first, then re-check every
		 * source (a seq_cst decrement, then loads: StoreLoad). */
		drop_spinning();
# ifndef WSR_RUNTIME
#  define RESPIN become_spinning()
# else
#  define RESPIN rejoin_spinning()
# endif
#else
		/* BROKEN: re-check while still counted in nmspinning, drop after. */
#define RESPIN skip
#endif
		/* The global queue again. */
		atomic {
			schedlock == 0 -> schedlock = me + 1;
			if
			:: glob > 0 -> pidleget_spinning(p)
			:: else
			fi
		}
		if
		:: p != NONE ->
			atomic {
				globrunqget(p);
				schedlock = 0
			}
			RESPIN;
			goto found
		:: else -> sched_unlock()
		fi;
		/* checkRunqsNoP: every local queue again. */
		i = 0;
		do
		:: i == PROCS -> break
		:: i < PROCS && runq[i] == 0 -> i++
		:: i < PROCS && runq[i] > 0 ->
			atomic {
				schedlock == 0 -> /* sched.lock held for the whole step */
				pidleget_spinning(p)
			}
			if
			:: p != NONE -> i = 0; RESPIN; goto top
			:: else -> break /* needspinning is set: that M takes over */
			fi
		od;
		i = 0;
#ifdef BROKEN
		drop_spinning();
#endif
	:: else
	fi;

	/* stopm: mput, sched.lock held for the whole step; then sleep.
	 * Never with a P, the spinning flag or the lock. */
	atomic {
		schedlock == 0 ->
		assert(p == NONE && !spinning);
		midle[me] = 1
	}
end_park:
	atomic {
		/* notesleep; acquirep(m.nextp) with m.spinning from startm; noteclear */
		note[me] != 0 ->
		p = note[me] - 1;
		spinning = 1;
		note[me] = 0
	}
	goto top;

found:	/* a G is taken; a spinning M stops spinning and wakes another (resetspinning) */
	if
	:: spinning -> drop_spinning(); wakep()
	:: else
	fi;
execute:	/* the G runs on (me, p) */
progress_run:
	do
	:: atomic {
			budget > 0 -> /* bookkeeping, one step with the runqput */
			budget--;
			readied++;
			/* wsr_go: runqput on the current P, then wakep */
#ifndef TSO_TAIL
			runq[p]++
#else
			sbuf[me]++; /* the tail store sits in the store buffer */
			sbufp[me] = p
#endif
		}
		wakep()
	:: true -> break
	od;
	if
	:: DRAINED -> goto top /* the G exits (TSO: once its M's stores are visible) */
	:: atomic {
			/* wsr_yield: globrunqput (sched.lock held for the whole
			 * step, bookkeeping in it), wakep, schedule */
			budget > 0 && schedlock == 0 && DRAINED ->
			budget--;
			readied++;
			glob++
		};
		wakep();
		goto top
	:: atomic { nhog < HOGS -> nhog++ };
		goto end_hog
	fi;
end_hog:
	false /* the G never yields: the M and P stay with it */
}

/* Runs only when nothing else can move: every M sleeps or runs a hog. */
active proctype quiescence()
{
	byte j;
	byte stranded; /* Gs left on a queue */

	timeout;
	d_step {
		stranded = glob;
		j = 0;
		do
		:: j < PROCS -> stranded = stranded + runq[j]; j++
		:: else -> break
		od;
		assert(stranded == 0); /* the lost wakeup */
		assert(ran == readied);
		assert(nmspinning == 0);
		j = 0
	}
}

init
{
	byte j;

	atomic {
		j = 0;
		do
		:: j < PROCS -> pidle[j] = (j != 0); j++
		:: else -> break
		od;
		npidle = PROCS - 1;
		mstarted[0] = 1;
		j = 0;
		do
		:: j < THREADS ->
			run M(j);
#ifdef TSO_TAIL
			run drain(j);
#endif
			j++
		:: else -> break
		od;
		j = 0
	}
}
