//! A results table handed to Python as an Arrow record batch: the Arrow C data interface
//! (<https://arrow.apache.org/docs/format/CDataInterface.html>) behind the PyCapsule protocol
//! (`__arrow_c_array__`), which polars reads directly (and pyarrow, hence pandas). Numeric
//! columns are exported without a copy: the buffers point into the table, which the exported
//! arrays keep alive until their consumer releases them. Text becomes large UTF-8 (offsets and
//! bytes), flags a bitmap, and "none" (`OptU64`, `OptF64`, and a NaN in `OptF64`) a null.
//!
//! Written by hand, about 250 lines: the arrow crates would more than double the extension's
//! build for these few structs.

use std::any::Any;
use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use tcplab_sim::columns::{Table, Values};

/// `ArrowSchema` of the C data interface.
#[repr(C)]
struct FfiSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut FfiSchema,
    dictionary: *mut FfiSchema,
    release: Option<unsafe extern "C" fn(*mut FfiSchema)>,
    private_data: *mut c_void,
}

/// `ArrowArray` of the C data interface.
#[repr(C)]
struct FfiArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut FfiArray,
    dictionary: *mut FfiArray,
    release: Option<unsafe extern "C" fn(*mut FfiArray)>,
    private_data: *mut c_void,
}

// SAFETY: the structs own what they point to (their private data) and the release callbacks
// free it from whichever thread calls them; nothing is shared with another struct.
unsafe impl Send for FfiSchema {}
unsafe impl Send for FfiArray {}

/// A struct nobody took over (a capsule dropped unread) is released with it.
impl Drop for FfiSchema {
    fn drop(&mut self) {
        if let Some(release) = self.release {
            // SAFETY: `release` is ours (set by `schema`) and frees only our private data.
            unsafe { release(self) }
        }
    }
}

impl Drop for FfiArray {
    fn drop(&mut self) {
        if let Some(release) = self.release {
            // SAFETY: as for the schema.
            unsafe { release(self) }
        }
    }
}

/// Frees the children a release callback owns: each was boxed when its parent was built, and
/// dropping it releases it unless its consumer moved it out.
///
/// # Safety
/// Every pointer comes from `Box::into_raw` and is freed only here, once.
unsafe fn free_children<T>(children: &[*mut T]) {
    for &child in children {
        drop(unsafe { Box::from_raw(child) });
    }
}

/// The flag of a field that may hold nulls.
const NULLABLE: i64 = 2;

struct SchemaPrivate {
    _format: CString,
    _name: CString,
    children: Box<[*mut FfiSchema]>,
}

unsafe extern "C" fn release_schema(s: *mut FfiSchema) {
    // SAFETY: `s` is a schema built by `schema`, not yet released (its release is set).
    let s = unsafe { &mut *s };
    let private = unsafe { Box::from_raw(s.private_data.cast::<SchemaPrivate>()) };
    unsafe { free_children(&private.children) };
    s.release = None;
    s.private_data = ptr::null_mut();
}

/// A field `name` of type `format` with `children`.
fn schema(format: &CStr, name: &str, flags: i64, children: Vec<FfiSchema>) -> FfiSchema {
    let format = format.to_owned();
    let name = CString::new(name).unwrap_or_default();
    let mut children: Box<[*mut FfiSchema]> = children
        .into_iter()
        .map(|c| Box::into_raw(Box::new(c)))
        .collect();
    let mut s = FfiSchema {
        format: format.as_ptr(),
        name: name.as_ptr(),
        metadata: ptr::null(),
        flags,
        n_children: children.len() as i64,
        children: children.as_mut_ptr(),
        dictionary: ptr::null_mut(),
        release: Some(release_schema),
        private_data: ptr::null_mut(),
    };
    let private = Box::new(SchemaPrivate {
        _format: format,
        _name: name,
        children,
    });
    s.private_data = Box::into_raw(private).cast();
    s
}

struct ArrayPrivate {
    /// What the buffers point into: the table, or buffers built for the export.
    _owners: Vec<Box<dyn Any + Send>>,
    /// What the array's `buffers` points to.
    _buffers: Box<[*const c_void]>,
    children: Box<[*mut FfiArray]>,
}

unsafe extern "C" fn release_array(a: *mut FfiArray) {
    // SAFETY: `a` is an array built by `array`, not yet released.
    let a = unsafe { &mut *a };
    let private = unsafe { Box::from_raw(a.private_data.cast::<ArrayPrivate>()) };
    unsafe { free_children(&private.children) };
    a.release = None;
    a.private_data = ptr::null_mut();
}

/// An array of `length` values with `null_count` nulls, its `buffers` pointing into
/// `owners`, and `children`.
fn array(
    length: usize,
    null_count: usize,
    buffers: Vec<*const c_void>,
    owners: Vec<Box<dyn Any + Send>>,
    children: Vec<FfiArray>,
) -> FfiArray {
    let mut buffers = buffers.into_boxed_slice();
    let mut children: Box<[*mut FfiArray]> = children
        .into_iter()
        .map(|c| Box::into_raw(Box::new(c)))
        .collect();
    let mut a = FfiArray {
        length: length as i64,
        null_count: null_count as i64,
        offset: 0,
        n_buffers: buffers.len() as i64,
        n_children: children.len() as i64,
        buffers: buffers.as_mut_ptr(),
        children: children.as_mut_ptr(),
        dictionary: ptr::null_mut(),
        release: Some(release_array),
        private_data: ptr::null_mut(),
    };
    let private = Box::new(ArrayPrivate {
        _owners: owners,
        _buffers: buffers,
        children,
    });
    a.private_data = Box::into_raw(private).cast();
    a
}

/// A numeric column read in place (`v` lies in `table`, which the array keeps alive).
fn in_place<T>(table: &Arc<Table>, v: &[T]) -> FfiArray {
    let owner: Box<dyn Any + Send> = Box::new(Arc::clone(table));
    array(
        v.len(),
        0,
        vec![ptr::null(), v.as_ptr().cast()],
        vec![owner],
        vec![],
    )
}

/// A buffer built for the export.
fn owned<T: Send + 'static>(v: Vec<T>) -> (*const c_void, Box<dyn Any + Send>) {
    (v.as_ptr().cast(), Box::new(v))
}

/// A validity bitmap (least significant bit first) of `valid`, and the number of nulls.
fn bitmap(valid: impl ExactSizeIterator<Item = bool>) -> (Vec<u8>, usize) {
    let mut bits = vec![0u8; valid.len().div_ceil(8)];
    let mut nulls = 0;
    for (i, ok) in valid.enumerate() {
        if ok {
            bits[i / 8] |= 1 << (i % 8);
        } else {
            nulls += 1;
        }
    }
    (bits, nulls)
}

/// A nullable numeric column: the values (`fill` where none or not `valid`) and a validity
/// bitmap.
fn nullable<T: Copy + Send + 'static>(
    values: &[Option<T>],
    fill: T,
    valid: fn(&T) -> bool,
) -> FfiArray {
    let n = values.len();
    let value = |x: &Option<T>| x.filter(valid);
    let (bits, nulls) = bitmap(values.iter().map(|x| value(x).is_some()));
    let data: Vec<T> = values.iter().map(|x| value(x).unwrap_or(fill)).collect();
    let (validity, o1) = owned(bits);
    let (data, o2) = owned(data);
    array(n, nulls, vec![validity, data], vec![o1, o2], vec![])
}

/// A text column as large UTF-8: 64-bit offsets and the bytes.
fn utf8<S: AsRef<str>>(values: impl ExactSizeIterator<Item = S> + Clone) -> FfiArray {
    let rows = values.len();
    let mut offsets = Vec::with_capacity(rows + 1);
    let mut bytes = Vec::with_capacity(values.clone().map(|s| s.as_ref().len()).sum());
    offsets.push(0i64);
    for s in values {
        bytes.extend_from_slice(s.as_ref().as_bytes());
        offsets.push(bytes.len() as i64);
    }
    let (o, o1) = owned(offsets);
    let (b, o2) = owned(bytes);
    array(rows, 0, vec![ptr::null(), o, b], vec![o1, o2], vec![])
}

/// Column `i` of `table`: its type (C data interface format string), flags and values.
fn column(table: &Arc<Table>, i: usize) -> (&'static CStr, i64, FfiArray) {
    match &table.columns[i].values {
        Values::Str(v) => (c"U", 0, utf8(v.iter())),
        Values::Label(v) => (c"U", 0, utf8(v.iter())),
        Values::Bool(v) => {
            let (bits, _) = bitmap(v.iter().copied());
            let (b, o) = owned(bits);
            (
                c"b",
                0,
                array(v.len(), 0, vec![ptr::null(), b], vec![o], vec![]),
            )
        }
        Values::U8(v) => (c"C", 0, in_place(table, v)),
        Values::U32(v) => (c"I", 0, in_place(table, v)),
        Values::U64(v) => (c"L", 0, in_place(table, v)),
        Values::F64(v) => (c"g", 0, in_place(table, v)),
        Values::OptU64(v) => (c"L", NULLABLE, nullable(v, 0, |_| true)),
        // NaN is "none" too, as the columns' schema says of nullable floats.
        Values::OptF64(v) => (c"g", NULLABLE, nullable(v, 0.0, |x| !x.is_nan())),
    }
}

/// The table as a struct array (one child per column) and its schema.
fn export(table: &Arc<Table>) -> (FfiSchema, FfiArray) {
    let rows = table.columns.first().map_or(0, |c| c.values.len());
    let (mut fields, mut arrays) = (vec![], vec![]);
    for (i, c) in table.columns.iter().enumerate() {
        let (format, flags, values) = column(table, i);
        fields.push(schema(format, &c.name, flags, vec![]));
        arrays.push(values);
    }
    let schema = schema(c"+s", "", 0, fields);
    let array = array(rows, 0, vec![ptr::null()], vec![], arrays);
    (schema, array)
}

/// One table of a run's results (`tcplab._native.ArrowTable`): an Arrow record batch for
/// any reader of the PyCapsule protocol, e.g. ``polars.DataFrame(table)``.
#[pyclass(module = "tcplab._native", name = "ArrowTable", frozen)]
pub struct ArrowTable {
    table: Arc<Table>,
}

impl ArrowTable {
    pub fn new(table: Table) -> Self {
        ArrowTable {
            table: Arc::new(table),
        }
    }
}

#[pymethods]
impl ArrowTable {
    /// The table's name (`flows`, `series`, ...).
    #[getter]
    fn name(&self) -> &'static str {
        self.table.name
    }

    /// The column names, in order.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.table.columns.iter().map(|c| c.name.clone()).collect()
    }

    /// The number of rows.
    fn __len__(&self) -> usize {
        self.table.columns.first().map_or(0, |c| c.values.len())
    }

    /// The PyCapsule protocol: (schema, array) capsules of the table as a struct array.
    /// `requested_schema` is not honoured (the protocol allows it): the table has one form.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema;
        let (schema, array) = export(&self.table);
        let schema = PyCapsule::new_with_value(py, schema, c"arrow_schema")?;
        let array = PyCapsule::new_with_value(py, array, c"arrow_array")?;
        Ok((schema, array))
    }
}
