//! The skiplist's arena: the memory its nodes live in, handed out in blocks and freed only
//! when the list is dropped (see the invariants in `skiplist`'s doc). Blocks come from the
//! allocator, or, for a large memtable, are huge pages mapped on their own
//! ([`HUGE_BLOCK_SIZE`]).

use std::alloc::{alloc, dealloc, Layout};
use std::ptr;

use super::sync::{AtomicOrdering, AtomicUsize};
use crate::util::Rng;

/// The largest arena block of 4 KiB pages; nodes over a quarter of the block size get a
/// block of their own.
pub const MAX_BLOCK_SIZE: usize = 1 << 20;
/// The arena block of a list asked for blocks of at least this size (a memtable of 16 MiB or
/// more), once its first [`SMALL_BLOCKS_FIRST`] blocks are used: one huge page (2 MiB on
/// x86-64 and most arm64 kernels), a mapping of its own aligned to it and advised for a
/// transparent huge page (`madvise(MADV_HUGEPAGE)`, which the kernel may decline).
/// Nodes are linked in key order but laid out in the order they were written, so a walk or
/// search of a list of random inserts touches a new page at almost every node: over 4 KiB
/// pages each of those is a TLB miss too, and a 64 MiB memtable spans 16,384 pages where the
/// TLB holds about 1,500. On 2 MiB pages it spans 32. (RocksDB's `memtable_huge_page_size`,
/// without the reserved hugetlbfs pages it needs.) The blocks are mapped, not taken from
/// the allocator: the advice stays with the memory, and memory the allocator got back
/// would bring it to whatever it hands that memory to next (block-cache blocks, which a
/// huge page only slows down while they fill).
pub const HUGE_BLOCK_SIZE: usize = 2 << 20;
/// Blocks of [`MAX_BLOCK_SIZE`] a list of huge blocks starts with: a memtable that holds
/// little (a family written to now and then, a memtable just switched in) keeps the memory
/// of a few small pages, where its first huge page would be 2 MiB from the first insert.
pub(super) const SMALL_BLOCKS_FIRST: usize = 2;

/// The blocks a list's nodes are written into, owned by the list's writer state (only the
/// writer allocates), with the generator of node heights that goes with them.
pub(super) struct Arena {
    /// [`MAX_BLOCK_SIZE`] at most, or [`HUGE_BLOCK_SIZE`] after [`SMALL_BLOCKS_FIRST`]
    /// blocks of [`MAX_BLOCK_SIZE`].
    pub(super) block_size: usize,
    /// Blocks from the allocator, with the layout each was allocated with.
    pub(super) blocks: Vec<(*mut u8, Layout)>,
    /// Huge blocks: mappings of [`HUGE_BLOCK_SIZE`] bytes each.
    pub(super) mapped: Vec<*mut u8>,
    pub(super) ptr: *mut u8,
    pub(super) remaining: usize,
    pub(super) rng: Rng,
}

impl Arena {
    /// An empty arena that allocates blocks of `block_size` bytes: at most
    /// [`MAX_BLOCK_SIZE`], or [`HUGE_BLOCK_SIZE`] if it is at least that.
    pub(super) fn new(block_size: usize, rng: Rng) -> Arena {
        Arena {
            block_size: match block_size >= HUGE_BLOCK_SIZE {
                true => HUGE_BLOCK_SIZE,
                false => block_size.clamp(1024, MAX_BLOCK_SIZE),
            },
            blocks: Vec::new(),
            mapped: Vec::new(),
            ptr: ptr::null_mut(),
            remaining: 0,
            rng,
        }
    }

    /// 8-byte aligned memory for `size` bytes, not zeroed: a node's every field is written
    /// before it is linked, and only then can anything read it. Zeroing would write every
    /// byte of a memtable twice, and would keep the allocator from handing a flushed
    /// memtable's blocks to the next one without clearing them first. Returns null only if
    /// the allocator fails, which `handle_alloc_error` turns into an abort as for any Rust
    /// allocation.
    pub(super) fn alloc(&mut self, size: usize, usage: &AtomicUsize) -> *mut u8 {
        let size = (size + 7) & !7;
        if size > self.remaining {
            if size > self.block_size / 4 {
                return self.new_block(size, usage);
            }
            let size = match self.block_size {
                HUGE_BLOCK_SIZE if self.blocks.len() < SMALL_BLOCKS_FIRST => MAX_BLOCK_SIZE,
                size => size,
            };
            self.ptr = match size {
                HUGE_BLOCK_SIZE => self.new_huge_block(usage),
                _ => self.new_block(size, usage),
            };
            self.remaining = size;
        }
        let p = self.ptr;
        // SAFETY: `size <= remaining`, so the result stays inside the current block.
        self.ptr = unsafe { self.ptr.add(size) };
        self.remaining -= size;
        p
    }

    fn new_block(&mut self, size: usize, usage: &AtomicUsize) -> *mut u8 {
        let layout = match Layout::from_size_align(size, 8) {
            Ok(l) => l,
            Err(_) => std::alloc::handle_alloc_error(Layout::new::<u64>()),
        };
        // SAFETY: the layout has a non-zero size (every node has a header).
        let p = unsafe { alloc(layout) };
        if p.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        self.blocks.push((p, layout));
        usage.fetch_add(size, AtomicOrdering::Relaxed);
        p
    }

    /// A block of [`HUGE_BLOCK_SIZE`] bytes on a huge page (see there), or from the
    /// allocator where none can be mapped.
    fn new_huge_block(&mut self, usage: &AtomicUsize) -> *mut u8 {
        match map_huge_block() {
            Some(p) => {
                self.mapped.push(p);
                usage.fetch_add(HUGE_BLOCK_SIZE, AtomicOrdering::Relaxed);
                p
            }
            None => self.new_block(HUGE_BLOCK_SIZE, usage),
        }
    }
}

/// Maps [`HUGE_BLOCK_SIZE`] bytes aligned to that size and advises them for a transparent
/// huge page: twice that is mapped, and what lies outside the aligned middle unmapped.
/// `None` if the mapping fails (the caller takes the block from the allocator instead).
#[cfg(target_os = "linux")]
fn map_huge_block() -> Option<*mut u8> {
    use rustix::mm::{madvise, mmap_anonymous, munmap, Advice, MapFlags, ProtFlags};
    let span = 2 * HUGE_BLOCK_SIZE;
    // SAFETY: a new private anonymous mapping, which nothing else refers to.
    let start = unsafe {
        mmap_anonymous(
            ptr::null_mut(),
            span,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::PRIVATE,
        )
    }
    .ok()?
    .cast::<u8>();
    let head = start.align_offset(HUGE_BLOCK_SIZE);
    // SAFETY: `head < HUGE_BLOCK_SIZE`, so the block and both ends lie inside the mapping
    // just made; the ends are unmapped once, here, and never used.
    unsafe {
        let block = start.add(head);
        if head > 0 {
            let _ = munmap(start.cast(), head);
        }
        let _ = munmap(
            block.add(HUGE_BLOCK_SIZE).cast(),
            span - head - HUGE_BLOCK_SIZE,
        );
        // Declined (no transparent huge pages in this kernel), the block stays on small
        // pages.
        let _ = madvise(block.cast(), HUGE_BLOCK_SIZE, Advice::LinuxHugepage);
        Some(block)
    }
}

/// Elsewhere huge blocks come from the allocator.
#[cfg(not(target_os = "linux"))]
fn map_huge_block() -> Option<*mut u8> {
    None
}

impl Drop for Arena {
    /// Frees every block. The arena lives in its list's writer state, so it is dropped with
    /// the list, when no reader can hold the list any more.
    fn drop(&mut self) {
        for &(p, layout) in &self.blocks {
            // SAFETY: each block was allocated by `alloc` with this layout and is freed once,
            // here.
            unsafe { dealloc(p, layout) };
        }
        #[cfg(target_os = "linux")]
        for &p in &self.mapped {
            // SAFETY: each was mapped by `map_huge_block`, HUGE_BLOCK_SIZE bytes, and is
            // unmapped once, here.
            let _ = unsafe { rustix::mm::munmap(p.cast(), HUGE_BLOCK_SIZE) };
        }
    }
}
