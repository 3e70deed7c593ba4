/*
 * ctx_x86_64.S - wsr__ctx_switch and the first-run trampoline (x86-64 SysV).
 *
 * Invariants: see ctx.h. The saved frame, from the saved sp upwards:
 *   [MXCSR (4) | x87 CW (2) | pad (2)] r15 r14 r13 r12 rbx rbp <return address>
 * Concurrency: none; runs on the calling thread.
 */
	.text
	.globl	wsr__ctx_switch
	.hidden	wsr__ctx_switch
	.type	wsr__ctx_switch, @function
wsr__ctx_switch:
	.cfi_startproc
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	subq	$8, %rsp
	stmxcsr	(%rsp)
	fnstcw	4(%rsp)
	movq	%rsp, (%rdi)
	movq	(%rsi), %rsp
	ldmxcsr	(%rsp)
	fldcw	4(%rsp)
	addq	$8, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	ret
	.cfi_endproc
	.size	wsr__ctx_switch, .-wsr__ctx_switch

	.globl	wsr__ctx_trampoline
	.hidden	wsr__ctx_trampoline
	.type	wsr__ctx_trampoline, @function
wsr__ctx_trampoline:
	.cfi_startproc
	.cfi_undefined rip
	xorl	%ebp, %ebp
	movq	%r12, %rdi
	call	*%r13
	ud2
	.cfi_endproc
	.size	wsr__ctx_trampoline, .-wsr__ctx_trampoline

	.section .note.GNU-stack, "", @progbits
