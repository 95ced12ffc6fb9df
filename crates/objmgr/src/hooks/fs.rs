//! File and directory hooks: path walk, getattr, open, read and write, ioctl, create, link,
//! unlink, rename, setattr, extended attributes and relabeling, statfs; and the labeling of
//! inodes and filesystems.
