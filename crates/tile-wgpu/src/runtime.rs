//! The wgpu runtime: one device per module, the program's WGSL compiled
//! once into a pipeline per entry point over one bind group layout (sizes,
//! failure word, every parameter, and the chunk results of whole-array
//! reductions), and calls that check everything before any work and
//! change nothing when they fail.
//!
//! A call binds the arguments (`tile_ir::args`), proves the 32-bit ranges
//! (`tile_plan::check_ranges_within`, [`crate::INDEX_BITS`]) and checks each
//! buffer against the adapter's limits; then it uploads every argument,
//! runs the kernels in order in one compute pass, reads the failure word
//! and, only when it is zero, copies the written parameters back.
//! `TILE_WGPU_BACKEND=vulkan|metal|dx12|gl` picks the backend (default:
//! the platform's primary ones; `gl` is OpenGL ES 3.1 through EGL, for
//! machines with no Vulkan driver).

use crate::emit::{emit, quad_binding, KERNEL_SITES, V4_SITE_BASE};
use crate::WgpuError;
use std::collections::BTreeMap;
use tile_ir::args::RawArg;
use tile_ir::{ArgError, Array, ArrayData, DType, Role, Sizes};
use tile_plan::kernel_ir::QuadCondition;
use tile_plan::{Mapping, Plan};
use wgpu::util::DeviceExt;

/// Threads per workgroup of element kernels (their `@workgroup_size`).
const WORKGROUP: i64 = crate::emit::ROW_THREADS as i64;
/// Workgroups per dispatch dimension at most (WebGPU's default limit; the
/// kernels' grid-stride loops cover the rest).
const MAX_GROUPS: i64 = 65535;

/// A call's arguments on the device ([`WgpuModule::bind`]).
pub struct WgpuBound {
    group: wgpu::BindGroup,
    /// The same buffers with every `f32` one through its 16-byte view,
    /// where a `_v4` entry point runs.
    views: Option<wgpu::BindGroup>,
    /// Per entry point: its workgroups, and whether its `_v4` pipeline
    /// runs.
    groups: Vec<((u32, u32), bool)>,
    err: wgpu::Buffer,
    bufs: Vec<wgpu::Buffer>,
    /// Written parameters with data: position and bytes.
    written: Vec<(usize, u64)>,
    /// Held for the bind group's life.
    _sizes: wgpu::Buffer,
    /// See [`WgpuBound::_sizes`].
    _partials: Option<wgpu::Buffer>,
}

/// An entry point of the module: kernel `kernel`'s, or (with `fin`) the
/// second stage of a whole-array reduction (one workgroup combining the
/// chunks' results in `tile_part`).
#[derive(Clone)]
struct Entry {
    kernel: usize,
    fin: bool,
    /// Where the kernel has a `_v4` entry point: the conditions under
    /// which it runs (`tile_plan::kernel_ir::quads_aligned`).
    quads: Option<Vec<QuadCondition>>,
}

/// A program compiled for one wgpu device.
pub struct WgpuModule {
    plan: Plan,
    source: String,
    sites: Vec<Vec<tile_emit::Site>>,
    adapter: String,
    device: wgpu::Device,
    queue: wgpu::Queue,
    layout: wgpu::BindGroupLayout,
    /// The bind group layout of the `_v4` entry points, where any
    /// kernel has one: sizes, failure word, the `f32` parameters' views
    /// and the other parameters.
    views: Option<wgpu::BindGroupLayout>,
    /// One per entry point, in launch order: each kernel's, and after a
    /// whole-array reduction's its `_fin` ([`Entry`]); beside it the
    /// kernel's `_v4` one where it has one.
    pipelines: Vec<(wgpu::ComputePipeline, Option<wgpu::ComputePipeline>)>,
    entries: Vec<Entry>,
    /// Whether `_v4` entry points may run (`TILE_WGPU_V4=0`: never).
    vec4: bool,
    /// The buffer each `_v4` entry point's own check names, per kernel.
    quad_sites: Vec<Vec<String>>,
    limits: wgpu::Limits,
    /// Whether the device has timestamp queries ([`WgpuModule::device_time`]).
    timestamps: bool,
}

/// The adapter `TILE_WGPU_BACKEND` allows (high performance first).
fn open_adapter() -> Result<wgpu::Adapter, WgpuError> {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends()?;
    let instance = wgpu::Instance::new(desc);
    pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    }))
    .map_err(|e| WgpuError::NoAdapter(e.to_string()))
}

fn name_of(adapter: &wgpu::Adapter) -> String {
    let info = adapter.get_info();
    format!("{} ({:?})", info.name, info.backend)
}

/// The adapter a module would run on: its name and backend, and whether
/// it has timestamp queries (device-timed calls).
pub fn adapter() -> Result<(String, bool), WgpuError> {
    let a = open_adapter()?;
    Ok((
        name_of(&a),
        a.features().contains(wgpu::Features::TIMESTAMP_QUERY),
    ))
}

/// The backends `TILE_WGPU_BACKEND` names.
fn backends() -> Result<wgpu::Backends, WgpuError> {
    backends_named(std::env::var("TILE_WGPU_BACKEND").ok().as_deref())
}

fn backends_named(name: Option<&str>) -> Result<wgpu::Backends, WgpuError> {
    match name {
        None | Some("") => Ok(wgpu::Backends::PRIMARY),
        Some("vulkan") => Ok(wgpu::Backends::VULKAN),
        Some("metal") => Ok(wgpu::Backends::METAL),
        Some("dx12") => Ok(wgpu::Backends::DX12),
        Some("gl") => Ok(wgpu::Backends::GL),
        Some(other) => Err(WgpuError::Unsupported(format!(
            "TILE_WGPU_BACKEND={other}: expected vulkan, metal, dx12 or gl"
        ))),
    }
}

impl WgpuModule {
    /// Prints the plan's WGSL, opens a device on the first adapter of the
    /// chosen backends and compiles a pipeline per entry point.
    pub fn compile(plan: &Plan) -> Result<WgpuModule, WgpuError> {
        let emitted = emit(plan)?;
        let program = &plan.program;
        let adapter = open_adapter()?;
        let adapter_name = name_of(&adapter);
        let limits = adapter.limits();
        let partials = plan
            .kernels
            .iter()
            .any(|k| k.mapping == Mapping::FullReduction);
        let bindings = program.params.len() + 2 + usize::from(partials);
        let has_views = emitted.quads.iter().any(Option::is_some);
        // Binding numbers run to the last view's where there are views.
        let numbers = if has_views {
            crate::emit::view_binding(program.params.len(), program.params.len())
        } else {
            bindings
        };
        if numbers > limits.max_bindings_per_bind_group as usize
            && bindings <= limits.max_storage_buffers_per_shader_stage as usize
        {
            return Err(WgpuError::Unsupported(format!(
                "`{}` numbers its bindings up to {} (each `f32` parameter also has a 16-byte view); the adapter {adapter_name} allows binding numbers below {}",
                program.name,
                numbers - 1,
                limits.max_bindings_per_bind_group
            )));
        }
        if bindings > limits.max_storage_buffers_per_shader_stage as usize
            || bindings > limits.max_bindings_per_bind_group as usize
        {
            return Err(WgpuError::Unsupported(format!(
                "`{}` needs {bindings} storage buffers ({} parameters and Tile's sizes and failure word{}); the adapter {adapter_name} allows {}",
                program.name,
                program.params.len(),
                if partials { " and chunk results" } else { "" },
                limits
                    .max_storage_buffers_per_shader_stage
                    .min(limits.max_bindings_per_bind_group)
            )));
        }
        // Timestamps time calls on the device where the adapter has them.
        let timestamps = adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("tile"),
            required_limits: limits.clone(),
            required_features: if timestamps {
                wgpu::Features::TIMESTAMP_QUERY
            } else {
                wgpu::Features::empty()
            },
            ..Default::default()
        }))
        .map_err(|e| WgpuError::Device(e.to_string()))?;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(&program.name),
            source: wgpu::ShaderSource::Wgsl(emitted.source.as_str().into()),
        });
        let layout_of = |numbers: &[(usize, bool)]| {
            let entries: Vec<wgpu::BindGroupLayoutEntry> = numbers
                .iter()
                .map(|&(b, read_only)| wgpu::BindGroupLayoutEntry {
                    binding: b as u32,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Storage { read_only },
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                })
                .collect();
            let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("tile"),
                entries: &entries,
            });
            let pipeline = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("tile"),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
            (layout, pipeline)
        };
        let read_only = |i: usize| program.params[i].role == Role::In;
        let plain: Vec<(usize, bool)> = [(0, true), (1, false)]
            .into_iter()
            .chain((0..program.params.len()).map(|i| (i + 2, read_only(i))))
            .chain(partials.then_some((program.params.len() + 2, false)))
            .collect();
        let (layout, pipeline_layout) = layout_of(&plain);
        let views = has_views.then(|| {
            let numbers: Vec<(usize, bool)> = [(0, true), (1, false)]
                .into_iter()
                .chain((0..program.params.len()).map(|i| (quad_binding(program, i), read_only(i))))
                .collect();
            layout_of(&numbers)
        });
        let entries: Vec<Entry> = plan
            .kernels
            .iter()
            .enumerate()
            .flat_map(|(kernel, k)| {
                let fin = k.mapping == Mapping::FullReduction;
                let quads = emitted.quads[kernel].as_ref().map(|(c, _)| c.clone());
                std::iter::once(Entry {
                    kernel,
                    fin: false,
                    quads,
                })
                .chain(fin.then_some(Entry {
                    kernel,
                    fin: true,
                    quads: None,
                }))
            })
            .collect();
        let pipeline = |entry: &str, layout: &wgpu::PipelineLayout| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: Some(layout),
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        let pipelines = entries
            .iter()
            .map(|e| {
                let k = &plan.kernels[e.kernel];
                let fin = if e.fin { "_fin" } else { "" };
                let plain = pipeline(&format!("tile_{}{fin}", k.name), &pipeline_layout);
                let quad = match (&e.quads, &views) {
                    (Some(_), Some((_, layout))) => {
                        Some(pipeline(&format!("tile_{}_v4", k.name), layout))
                    }
                    _ => None,
                };
                (plain, quad)
            })
            .collect();
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(WgpuError::Compile(e.to_string()));
        }
        let quad_sites = emitted
            .quads
            .iter()
            .map(|q| q.as_ref().map(|(_, s)| s.clone()).unwrap_or_default())
            .collect();
        Ok(WgpuModule {
            plan: plan.clone(),
            source: emitted.source,
            sites: emitted.sites,
            adapter: adapter_name,
            device,
            queue,
            layout,
            views: views.map(|(layout, _)| layout),
            pipelines,
            entries,
            vec4: std::env::var("TILE_WGPU_V4").map_or(true, |v| v != "0"),
            quad_sites,
            limits,
            timestamps,
        })
    }

    /// The generated WGSL.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether calls can be timed on the device ([`WgpuModule::device_time`]).
    pub fn has_timestamps(&self) -> bool {
        self.timestamps
    }

    /// The adapter's name and backend (`llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan)`).
    pub fn adapter(&self) -> &str {
        &self.adapter
    }

    /// Runs the program over `arrays` (one per parameter; written ones are
    /// updated in place). Every argument is checked before any work; a
    /// failed check on the device leaves every array unchanged.
    pub fn run(
        &self,
        arrays: &mut BTreeMap<String, Array>,
        explicit: &Sizes,
    ) -> Result<(), WgpuError> {
        let bound = self.bind(arrays, explicit)?;
        self.launch(&bound);
        self.finish(&bound)?;
        self.download(&bound, arrays)
    }

    /// [`WgpuModule::run`] on arguments in caller-owned host memory (the
    /// Python package's NumPy arrays and CPU tensors): every check of
    /// `tile_ir::args::bind_raw` (names, shapes, sizes in bytes, null,
    /// alignment, a written argument overlapping another) before any
    /// copy; the written arguments are written back only after a call
    /// that succeeded.
    ///
    /// # Safety
    ///
    /// Each argument's `addr` must be valid for reads of `bytes` bytes, and
    /// for writes where the program writes it, for the whole call, with no
    /// other thread writing that memory meanwhile.
    pub unsafe fn run_raw(&self, args: &[RawArg], explicit: &Sizes) -> Result<(), WgpuError> {
        let program = &self.plan.program;
        tile_ir::args::bind_raw(program, args, explicit)?;
        let mut arrays = BTreeMap::new();
        for a in args {
            let bytes: &[u8] = if a.bytes == 0 {
                &[]
            } else {
                // SAFETY: the caller's contract; bind_raw checked the
                // size against the shape, null and alignment.
                unsafe { std::slice::from_raw_parts(a.addr as *const u8, a.bytes) }
            };
            arrays.insert(a.name.clone(), host_array(a.dtype, &a.shape, bytes)?);
        }
        self.run(&mut arrays, explicit)?;
        for a in args {
            let written = program.param(&a.name).is_some_and(|p| p.role.is_written());
            if let (true, Some(out)) = (written && a.bytes > 0, arrays.get(&a.name)) {
                let src = out.as_bytes();
                debug_assert_eq!(src.len(), a.bytes);
                // SAFETY: the caller's contract (writable for `bytes`);
                // the array has the argument's shape and dtype, so as
                // many bytes.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        src.as_ptr(),
                        a.addr as *mut u8,
                        src.len().min(a.bytes),
                    )
                };
            }
        }
        Ok(())
    }

    /// Checks `arrays` against the program (shapes, the 32-bit range
    /// proof, the adapter's buffer limits) and uploads them: a call that
    /// [`WgpuModule::launch`] may start any number of times.
    pub fn bind(
        &self,
        arrays: &BTreeMap<String, Array>,
        explicit: &Sizes,
    ) -> Result<WgpuBound, WgpuError> {
        let program = &self.plan.program;
        let sizes = tile_ir::args::bind_arrays(program, arrays, explicit)?;
        tile_plan::check_ranges_within(&self.plan, &sizes, crate::INDEX_BITS)?;
        let mut groups = Vec::with_capacity(self.entries.len());
        for e in &self.entries {
            let k = &self.plan.kernels[e.kernel];
            let quad = self.vec4
                && e.quads
                    .as_ref()
                    .is_some_and(|c| tile_plan::kernel_ir::quads_aligned(c, &sizes));
            groups.push(match (k.mapping, e.fin) {
                (Mapping::FullReduction, false) => ((tile_plan::PARTIALS as u32, 1), false),
                (Mapping::FullReduction, true) => ((1, 1), false),
                _ => (self.groups(k, &sizes, quad)?, quad),
            });
        }
        let mut uploads = Vec::with_capacity(program.params.len());
        for p in &program.params {
            let a = arrays
                .get(&p.name)
                .ok_or_else(|| ArgError::Missing(p.name.clone()))?;
            let bytes = storage_bytes(a);
            let limit = self
                .limits
                .max_storage_buffer_binding_size
                .min(self.limits.max_buffer_size);
            if bytes.len() as u64 > limit {
                return Err(WgpuError::Unsupported(format!(
                    "`{}` takes {} bytes; the adapter {} binds at most {limit} bytes per buffer",
                    p.name,
                    bytes.len(),
                    self.adapter
                )));
            }
            uploads.push(bytes);
        }
        let symbols: Vec<u8> = program
            .size_symbols()
            .iter()
            .flat_map(|s| (sizes.get(s).copied().unwrap_or(0) as i32).to_le_bytes())
            .chain([0u8; 4])
            .collect();
        let storage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST;
        let init = |label: &str, contents: &[u8]| {
            self.device
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(label),
                    contents,
                    usage: storage,
                })
        };
        let sizes_buf = init("tile_sizes", &symbols);
        let err_buf = init("tile_err", &[0u8; 4]);
        let bufs: Vec<wgpu::Buffer> = program
            .params
            .iter()
            .zip(&uploads)
            .map(|(p, bytes)| {
                // Whole 16-byte quads (at least one): a `_v4` entry point
                // reads every element through the buffer's `vec4<f32>`
                // view, whose length counts whole quads.
                let padded = bytes.len().max(1).div_ceil(16) * 16;
                if padded == bytes.len() {
                    init(&p.name, bytes)
                } else {
                    let mut b = bytes.clone();
                    b.resize(padded, 0);
                    init(&p.name, &b)
                }
            })
            .collect();
        let mut entries = vec![
            wgpu::BindGroupEntry {
                binding: 0,
                resource: sizes_buf.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: err_buf.as_entire_binding(),
            },
        ];
        for (i, b) in bufs.iter().enumerate() {
            entries.push(wgpu::BindGroupEntry {
                binding: i as u32 + 2,
                resource: b.as_entire_binding(),
            });
        }
        // Whole-array reductions' chunk results (`tile_plan::PARTIALS`
        // `f32` values), after the parameters.
        let partials = self
            .entries
            .iter()
            .any(|e| e.fin)
            .then(|| init("tile_part", &vec![0u8; 4 * tile_plan::PARTIALS as usize]));
        if let Some(b) = &partials {
            entries.push(wgpu::BindGroupEntry {
                binding: bufs.len() as u32 + 2,
                resource: b.as_entire_binding(),
            });
        }
        let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("tile"),
            layout: &self.layout,
            entries: &entries,
        });
        // The `_v4` entry points' bindings, where one runs: the `f32`
        // parameters at their views' numbers.
        let views = match &self.views {
            Some(layout) if groups.iter().any(|&(_, quad)| quad) => {
                Some(self.bind_views(layout, [&sizes_buf, &err_buf], &bufs))
            }
            _ => None,
        };
        let written = program
            .params
            .iter()
            .enumerate()
            .filter(|(i, p)| p.role.is_written() && !uploads[*i].is_empty())
            .map(|(i, _)| (i, uploads[i].len() as u64))
            .collect();
        Ok(WgpuBound {
            group,
            views,
            groups,
            err: err_buf,
            bufs,
            written,
            _sizes: sizes_buf,
            _partials: partials,
        })
    }

    /// The entry points a call over `bound` dispatches, in order
    /// (`tile_k0_v4` where a kernel's 16-byte entry point runs).
    pub fn launched(&self, bound: &WgpuBound) -> Vec<String> {
        self.entries
            .iter()
            .zip(&bound.groups)
            .map(|(e, &(_, quad))| {
                let k = &self.plan.kernels[e.kernel].name;
                match (e.fin, quad) {
                    (true, _) => format!("tile_{k}_fin"),
                    (false, true) => format!("tile_{k}_v4"),
                    (false, false) => format!("tile_{k}"),
                }
            })
            .collect()
    }

    /// The `_v4` entry points' bind group: the sizes and failure word at
    /// 0 and 1, each `f32` parameter's buffer at its view's number, the
    /// others at their own.
    fn bind_views(
        &self,
        layout: &wgpu::BindGroupLayout,
        words: [&wgpu::Buffer; 2],
        bufs: &[wgpu::Buffer],
    ) -> wgpu::BindGroup {
        let program = &self.plan.program;
        let numbered = bufs
            .iter()
            .enumerate()
            .map(|(i, b)| (quad_binding(program, i), b));
        let entries: Vec<wgpu::BindGroupEntry> = words
            .into_iter()
            .enumerate()
            .chain(numbered)
            .map(|(binding, buf)| wgpu::BindGroupEntry {
                binding: binding as u32,
                resource: buf.as_entire_binding(),
            })
            .collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("tile views"),
            layout,
            entries: &entries,
        })
    }

    /// Starts every kernel of one call over `bound`, in order, in one
    /// compute pass (asynchronous: [`WgpuModule::sync`] waits).
    pub fn launch(&self, bound: &WgpuBound) {
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("tile"),
            });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("tile"),
                timestamp_writes: None,
            });
            self.record(&mut pass, bound, 1);
        }
        self.queue.submit([encoder.finish()]);
    }

    /// Records `n` calls over `bound` into `pass`: every entry point's
    /// dispatch, in order, per call.
    fn record(&self, pass: &mut wgpu::ComputePass<'_>, bound: &WgpuBound, n: usize) {
        let mut plain_group = None;
        for _ in 0..n {
            for ((plain, quad), &((x, y), use_quad)) in self.pipelines.iter().zip(&bound.groups) {
                let (pipeline, group) = match (quad, &bound.views) {
                    (Some(q), Some(views)) if use_quad => (q, views),
                    _ => (plain, &bound.group),
                };
                let is_plain = std::ptr::eq(group, &bound.group);
                if plain_group != Some(is_plain) {
                    pass.set_bind_group(0, group, &[]);
                    plain_group = Some(is_plain);
                }
                pass.set_pipeline(pipeline);
                pass.dispatch_workgroups(x, y, 1);
            }
        }
    }

    /// Device time in seconds of `n` calls over `bound` back to back (all
    /// their dispatches in one compute pass between two timestamps), or
    /// `None` where the adapter has no timestamp queries.
    pub fn device_time(&self, bound: &WgpuBound, n: usize) -> Option<Result<f64, WgpuError>> {
        if !self.timestamps {
            return None;
        }
        let queries = self.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("tile timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        });
        let resolved = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("tile timestamps"),
            size: 16,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let back = self.read_back(16);
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("tile"),
            });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("tile timed"),
                timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                    query_set: &queries,
                    beginning_of_pass_write_index: Some(0),
                    end_of_pass_write_index: Some(1),
                }),
            });
            self.record(&mut pass, bound, n);
        }
        encoder.resolve_query_set(&queries, 0..2, &resolved, 0);
        encoder.copy_buffer_to_buffer(&resolved, 0, &back, 0, 16);
        self.queue.submit([encoder.finish()]);
        Some(self.read(&back).map(|b| {
            let t = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
            t(8).saturating_sub(t(0)) as f64 * f64::from(self.queue.get_timestamp_period()) * 1e-9
        }))
    }

    /// Waits for every call started so far.
    pub fn sync(&self) -> Result<(), WgpuError> {
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: None,
                timeout: None,
            })
            .map(|_| ())
            .map_err(|e| WgpuError::Device(e.to_string()))
    }

    /// Waits for the calls started over `bound` and reads the failure
    /// word: the failed check it names, if any (the word is then cleared,
    /// so the binding may run again).
    pub fn finish(&self, bound: &WgpuBound) -> Result<(), WgpuError> {
        let back = self.read_back(4);
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("tile"),
            });
        encoder.copy_buffer_to_buffer(&bound.err, 0, &back, 0, 4);
        self.queue.submit([encoder.finish()]);
        let word = self.read(&back)?;
        let site = i32::from_le_bytes(word[..4].try_into().unwrap_or([0; 4]));
        if site != 0 {
            self.queue.write_buffer(&bound.err, 0, &[0u8; 4]);
            return Err(self.failure(site));
        }
        Ok(())
    }

    /// Copies the written parameters of `bound` into `arrays` (call after
    /// [`WgpuModule::finish`] found no failure).
    pub fn download(
        &self,
        bound: &WgpuBound,
        arrays: &mut BTreeMap<String, Array>,
    ) -> Result<(), WgpuError> {
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("tile"),
            });
        let mut backs = Vec::with_capacity(bound.written.len());
        for &(i, size) in &bound.written {
            let back = self.read_back(size);
            encoder.copy_buffer_to_buffer(&bound.bufs[i], 0, &back, 0, size);
            backs.push((i, back));
        }
        self.queue.submit([encoder.finish()]);
        let mut results = Vec::with_capacity(backs.len());
        for (i, back) in &backs {
            results.push((*i, self.read(back)?));
        }
        // Every read succeeded: commit.
        for (i, bytes) in results {
            let p = &self.plan.program.params[i];
            if let Some(a) = arrays.get_mut(&p.name) {
                write_back(a, &bytes);
            }
        }
        Ok(())
    }

    fn read_back(&self, size: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("tile read-back"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// The workgroups of kernel `k` at `sizes`: the element grid's columns
    /// (or with `quad` its whole quads) over x (256 threads each), its
    /// rows over y; one per row of a row
    /// kernel; one per workgroup's columns of a column kernel; one for a
    /// serial kernel.
    fn groups(
        &self,
        k: &tile_plan::Kernel,
        sizes: &Sizes,
        quad: bool,
    ) -> Result<(u32, u32), WgpuError> {
        if k.mapping == Mapping::Serial {
            return Ok((1, 1));
        }
        let ext = k.extents(sizes)?;
        let first = ext.first().copied().unwrap_or(1);
        match k.mapping {
            // One workgroup per row (a grid-stride loop over the rest).
            Mapping::RowReduction => return Ok((first.clamp(1, MAX_GROUPS) as u32, 1)),
            // A workgroup's columns side by side.
            Mapping::ColumnReduction => {
                let wx = i64::from(crate::emit::workgroup(k).0);
                return Ok((((first + wx - 1) / wx).clamp(1, MAX_GROUPS) as u32, 1));
            }
            _ => {}
        }
        let (cols, rows) = match ext.split_last() {
            Some((c, r)) => (*c, r.iter().product::<i64>()),
            None => (1, 1),
        };
        // A `_v4` entry point's work items are whole quads (its ragged
        // end runs on workgroup 0).
        let cols = if quad { cols / 4 } else { cols };
        let x = ((cols + WORKGROUP - 1) / WORKGROUP).clamp(1, MAX_GROUPS);
        let y = rows.clamp(1, MAX_GROUPS);
        Ok((x as u32, y as u32))
    }

    /// Maps a read-back buffer and returns its bytes.
    fn read(&self, buf: &wgpu::Buffer) -> Result<Vec<u8>, WgpuError> {
        let (tx, rx) = std::sync::mpsc::channel();
        buf.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: None,
                timeout: None,
            })
            .map_err(|e| WgpuError::Device(e.to_string()))?;
        rx.recv()
            .map_err(|e| WgpuError::Device(e.to_string()))?
            .map_err(|e| WgpuError::Device(e.to_string()))?;
        let bytes = buf
            .slice(..)
            .get_mapped_range()
            .map_err(|e| WgpuError::Device(e.to_string()))?
            .to_vec();
        buf.unmap();
        Ok(bytes)
    }

    /// The failed check that site id `site` names.
    fn failure(&self, site: i32) -> WgpuError {
        let (k, within) = (site / KERNEL_SITES, site % KERNEL_SITES);
        let kernel = usize::try_from(k)
            .ok()
            .and_then(|k| self.plan.kernels.get(k).map(|kk| (k, kk.name.clone())));
        if let Some((k, name)) = kernel {
            if within > V4_SITE_BASE {
                // A `_v4` entry point's 16-byte access.
                if let Some(buf) = usize::try_from(within - V4_SITE_BASE - 1)
                    .ok()
                    .and_then(|i| self.quad_sites[k].get(i))
                {
                    return WgpuError::OutOfBounds {
                        kernel: name,
                        what: "vector access".into(),
                        buf: buf.clone(),
                        line: 0,
                    };
                }
            } else if let Some(s) = usize::try_from(within - 1)
                .ok()
                .and_then(|i| self.sites[k].get(i))
            {
                return match s.what {
                    "div" => WgpuError::IntArith {
                        kernel: name,
                        line: s.line,
                    },
                    _ => WgpuError::OutOfBounds {
                        kernel: name,
                        what: s.what.to_string(),
                        buf: s.buf.clone(),
                        line: s.line,
                    },
                };
            }
        }
        WgpuError::Device(format!("a check failed with an unknown site id {site}"))
    }
}

/// An array's elements as the kernels store them (`bool` as `i32`).
fn storage_bytes(a: &Array) -> Vec<u8> {
    match a.data() {
        ArrayData::Bool(v) => v
            .iter()
            .flat_map(|&b| i32::from(b != 0).to_le_bytes())
            .collect(),
        ArrayData::F64(_) => Vec::new(),
        _ => a.as_bytes().to_vec(),
    }
}

/// An array of `dtype` and `shape` holding a copy of `bytes` (native
/// byte order, as the host holds it).
fn host_array(dtype: DType, shape: &[usize], bytes: &[u8]) -> Result<Array, WgpuError> {
    let words = |n: usize| bytes.chunks_exact(n);
    let data = match dtype {
        DType::F32 => ArrayData::F32(
            words(4)
                .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ),
        DType::I32 => ArrayData::I32(
            words(4)
                .map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ),
        DType::Bool => ArrayData::Bool(bytes.iter().map(|&b| u8::from(b != 0)).collect()),
        DType::F64 => ArrayData::F64(
            words(8)
                .map(|c| f64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
                .collect(),
        ),
    };
    Array::new(shape.to_vec(), data).map_err(|e| WgpuError::Device(e.to_string()))
}

/// Writes the kernels' elements back into `a`.
fn write_back(a: &mut Array, bytes: &[u8]) {
    let words = bytes.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]);
    let data = match a.dtype() {
        DType::F32 => ArrayData::F32(words.map(f32::from_le_bytes).collect()),
        DType::I32 => ArrayData::I32(words.map(i32::from_le_bytes).collect()),
        DType::Bool => ArrayData::Bool(
            words
                .map(|w| u8::from(i32::from_le_bytes(w) != 0))
                .collect(),
        ),
        DType::F64 => return,
    };
    if let Ok(new) = Array::new(a.shape().to_vec(), data) {
        *a = new;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_wgpu_backend_names_a_backend_or_is_refused() {
        assert_eq!(
            backends_named(Some("vulkan")).unwrap(),
            wgpu::Backends::VULKAN
        );
        assert_eq!(backends_named(Some("gl")).unwrap(), wgpu::Backends::GL);
        assert_eq!(backends_named(None).unwrap(), wgpu::Backends::PRIMARY);
        let e = backends_named(Some("webgl")).unwrap_err().to_string();
        assert!(
            e.contains("TILE_WGPU_BACKEND=webgl: expected vulkan, metal, dx12 or gl"),
            "{e}"
        );
    }
}
