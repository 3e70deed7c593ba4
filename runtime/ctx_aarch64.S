/*
 * ctx_aarch64.S - wsr__ctx_switch and the first-run trampoline (AArch64 AAPCS64).
 *
 * Invariants: see ctx.h. The 176-byte saved frame: x19..x30 at 0..88,
 *   d8..d15 at 96..152, FPCR at 160.
 * Concurrency: none; runs on the calling thread.
 */
	.text
	.globl	wsr__ctx_switch
	.hidden	wsr__ctx_switch
	.type	wsr__ctx_switch, %function
wsr__ctx_switch:
	sub	sp, sp, #176
	stp	x19, x20, [sp, #0]
	stp	x21, x22, [sp, #16]
	stp	x23, x24, [sp, #32]
	stp	x25, x26, [sp, #48]
	stp	x27, x28, [sp, #64]
	stp	x29, x30, [sp, #80]
	stp	d8, d9, [sp, #96]
	stp	d10, d11, [sp, #112]
	stp	d12, d13, [sp, #128]
	stp	d14, d15, [sp, #144]
	mrs	x9, fpcr
	str	x9, [sp, #160]
	mov	x9, sp
	str	x9, [x0]
	ldr	x9, [x1]
	mov	sp, x9
	ldr	x9, [sp, #160]
	msr	fpcr, x9
	ldp	x19, x20, [sp, #0]
	ldp	x21, x22, [sp, #16]
	ldp	x23, x24, [sp, #32]
	ldp	x25, x26, [sp, #48]
	ldp	x27, x28, [sp, #64]
	ldp	x29, x30, [sp, #80]
	ldp	d8, d9, [sp, #96]
	ldp	d10, d11, [sp, #112]
	ldp	d12, d13, [sp, #128]
	ldp	d14, d15, [sp, #144]
	add	sp, sp, #176
	ret
	.size	wsr__ctx_switch, .-wsr__ctx_switch

	.globl	wsr__ctx_trampoline
	.hidden	wsr__ctx_trampoline
	.type	wsr__ctx_trampoline, %function
wsr__ctx_trampoline:
	mov	x29, xzr
	mov	x0, x19
	blr	x20
	brk	#0
	.size	wsr__ctx_trampoline, .-wsr__ctx_trampoline

	.section .note.GNU-stack, "", %progbits
